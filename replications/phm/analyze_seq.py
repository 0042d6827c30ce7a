"""The sequence classifiers (claims S1-S3, KS1-KS3, IS1-IS2): test accuracy of every arm on fresh sequences of the
agreement task, the gaps to the dense Transformer as means over seeds of per-seed differences (the arms of a seed see
the same batches), the block's parameter fractions, the bag of words and the untrained networks (rebuilt from their
init seeds) as controls, and the PHM maps of the trained blocks against PHM.forward (float64)."""
import numpy as np
import torch

from shared.nn.phm import PHM
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics

from .common import accuracies, accuracy_gaps, agreement_data, seq_arms, seq_body_params
from .model import Map, build


def main():
    run = start_run("checkpoint", "history", "metrics", "arrays")
    s, a = run.params["seq"], run.params["analysis"]
    x, y = agreement_data(s, "test")
    models, specs, meta = load_models(run.args.checkpoint)
    acc, untrained = accuracies(models, specs, x, y, build)
    arms = [arm for arm, *_ in seq_arms(s)]
    body = {arm: seq_body_params(s, layer, n) for arm, layer, n in seq_arms(s)}
    first = {arm: models[f"{arm}-seed{s['seeds'][0]}"] for arm in arms}
    total = {arm: sum(p.numel() for p in model.parameters()) for arm, model in first.items()}

    m, gap = accuracy_gaps(acc, untrained, arms, s["seeds"], s["ns"])
    m |= {f"params_{arm}": total[arm] for arm in arms}
    m |= {f"body_fraction_phm{n}": body[f"phm{n}"] / body["dense"] for n in s["ns"]}
    m["dense_minus_bow"] = gap("dense", "bow")
    m["acc_bow_max"] = max(acc[f"bow-seed{k}"] for k in s["seeds"])
    m["untrained_acc_max"] = max(untrained.values())
    m["body_params_mismatch"] = max(abs(sum(p.numel() for mod in model.modules() if isinstance(mod, Map)
                                            for p in mod.map.parameters()) - specs[name]["body_params"])
                                    for name, model in models.items())
    # the materialised H the blocks use (Map.materialise) against PHM.forward, on the trained weights, float64
    gen = torch.Generator().manual_seed(derive_seed(s["data_seed"], "identity"))
    errs = []
    with torch.no_grad():
        for model in models.values():
            for mod in model.modules():
                if isinstance(mod, PHM):
                    phm = mod.double()
                    h = torch.randn(a["identity_inputs"], phm.d_in, generator=gen, dtype=torch.float64)
                    errs.append(float((phm(h) - h @ phm.kron_matrix().T).abs().max()))
    m["trained_forward_vs_kron_max_abs"] = max(errs)

    arrays = {"arms": np.array(arms), "params": np.array([total[arm] for arm in arms], float),
              "acc": np.array([[acc[f"{arm}-seed{k}"] for k in s["seeds"]] for arm in arms])}
    info = {"test_sequences": len(x), "seeds": s["seeds"], "acc": acc, "untrained": untrained,
            "body_params": body, "params": total}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
