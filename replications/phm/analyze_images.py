"""The image MLPs (claims F3-F6, E3, K1, K6, identities I4-I5): test accuracy of every arm, the gaps to the dense
MLP as means over seeds of per-seed differences (the arms of a seed see the same batches), the parameter fractions,
and the untrained networks (rebuilt from their init seeds) as the control."""
import numpy as np
import torch

from shared.nn.phm import PHM
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import accuracies, accuracy_gaps, image_arms, load_image_data
from .model import build


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    e, a = run.params["images"], run.params["analysis"]
    data = load_image_data(run.args.data)
    x, y = data["x_test"], data["y_test"]
    models, specs, meta = load_models(run.args.checkpoint)
    acc, untrained = accuracies(models, specs, x, y, build)
    arms = [arm for arm, *_ in image_arms(e)]
    params = {arm: specs[f"{arm}-seed{e['seeds'][0]}"]["params"] for arm in arms}

    m, gap = accuracy_gaps(acc, untrained, arms, e["seeds"], e["ns"])
    m |= {f"params_{arm}": params[arm] for arm in arms}
    m |= {f"params_fraction_phm{n}": params[f"phm{n}"] / params["dense"] for n in e["ns"]}
    m["phm4_minus_quaternion"] = gap("phm4", "quaternion")
    m["phm4_minus_dense_matched"] = gap("phm4", "dense_matched")
    m["dense_minus_linear"] = gap("dense", "linear")
    m["dense_matched_params_ratio"] = params["dense_matched"] / params["phm4"]
    m["untrained_acc_max"] = max(untrained.values())
    # the hidden maps' parameters alone (no biases, no head): n^3 + a b / n against a b
    sizes = [e["d_input"], *e["hidden"]]
    dense_hidden = sum(p * q for p, q in zip(sizes, sizes[1:]))
    m["hidden_fraction_phm4"] = sum(4 ** 3 + p * q // 4 for p, q in zip(sizes, sizes[1:])) / dense_hidden
    # the layer's exact forward on the trained networks' weights, float64
    xi = x[:a["identity_inputs"]].double()
    errs = []
    with torch.no_grad():
        for name, model in models.items():
            h = xi
            for layer in model.hidden:
                if isinstance(layer.map, PHM):
                    phm = layer.map.double()
                    errs.append(float((phm(h) - h @ phm.kron_matrix().T).abs().max()))
                    h = torch.relu(phm(h) + layer.bias.double())
    m["trained_forward_vs_kron_max_abs"] = max(errs)

    arrays = {"arms": np.array(arms), "params": np.array([params[arm] for arm in arms], float),
              "acc": np.array([[acc[f"{arm}-seed{s}"] for s in e["seeds"]] for arm in arms])}
    info = {"test_images": len(x), "seeds": e["seeds"], "acc": acc}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
