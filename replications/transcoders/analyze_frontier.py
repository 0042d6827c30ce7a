"""Sparsity against faithfulness in the language model (section 4.1's comparison, like with like): for each of the
two analysed layers and each L1 coefficient, L0 (mean active features on evaluation tokens) and the fraction of
the cross-entropy increase of zero-ablating the MLP that is recovered when the MLP is replaced by the transcoder,
and when the MLP's output is replaced by the SAE's reconstruction of it (both supply the MLP's output). Dead
features: never active on the evaluation tokens. Controls measured here: the untrained transcoder (its random
initialisation) in place of the MLP, and the zero-ablation itself.
"""
import numpy as np
import torch

from shared.data.tokens import load_tokens
from shared.nn.transcoder import Transcoder, fraction_of_variance_unexplained, sparsity_stats
from shared.pipeline.run import start_run, write_metrics
from shared.train.language_model import fixed_windows

from .train_dicts import activations
from .common import (SAEOnOutput, ZeroMLP, ce_with_mlp, ce_with_transcoder, cross_entropy, frontier_gap,
                     load_checkpoint, recovered)

SIDES = ("a", "b")  # the first and second analysed layer (dicts.layers)


def main():
    run = start_run("data", "lm", "dicts", "metrics", "arrays")
    p, a = run.params["dicts"], run.params["analysis"]
    (lm,), _, _ = (lambda m: (list(m[0].values()), m[1], m[2]))(load_checkpoint(run.args.lm, run.device))
    dicts, specs, meta = load_checkpoint(run.args.dicts, run.device)
    _, val_tokens, _ = load_tokens(run.args.data)
    windows = fixed_windows(val_tokens, a["eval_windows"], lm.n_ctx + 1).to(run.device)
    eb = a["eval_batch"]
    clean = cross_entropy(lm, windows, eb)
    metrics, info, arrays = {"ce_clean": clean}, {}, {}
    for side, layer in zip(SIDES, p["layers"]):
        x, y = activations(lm, windows[:, :-1], layer, eb)
        zero = ce_with_mlp(lm, windows, layer, ZeroMLP(), eb)
        rows = {"transcoder": [], "sae": []}
        for i, l1 in enumerate(p["l1"]):
            for kind in rows:
                m = dicts[f"{kind}_L{layer}_l1_{i}"]
                src = x if kind == "transcoder" else y
                stats = sparsity_stats(m, src)
                ce = (ce_with_transcoder(lm, windows, layer, m, eb) if kind == "transcoder"
                      else ce_with_mlp(lm, windows, layer, SAEOnOutput(lm.blocks[layer].mlp, m), eb))
                rows[kind].append({"l1": l1, "l0": stats["l0"], "dead_fraction": stats["dead_fraction"],
                                   "ce": ce, "recovered": recovered(ce, clean, zero),
                                   "fvu": fraction_of_variance_unexplained(m(src), y)})
        spec = specs[f"transcoder_L{layer}_l1_0"]
        torch.manual_seed(spec["init_seed"])
        fresh = Transcoder(spec["d_in"], spec["d_out"], spec["n_features"]).to(run.device)
        untrained_rec = recovered(ce_with_transcoder(lm, windows, layer, fresh, eb), clean, zero)
        gap, overlap = frontier_gap([r["l0"] for r in rows["transcoder"]], [r["recovered"] for r in rows["transcoder"]],
                                    [r["l0"] for r in rows["sae"]], [r["recovered"] for r in rows["sae"]])
        c = a["circuit_l1_index"]
        metrics.update({
            f"ce_zero_{side}": zero, f"zero_ablation_ce_increase_{side}": zero - clean,
            f"frontier_gap_{side}": gap, f"untrained_transcoder_recovered_{side}": untrained_rec,
            f"transcoder_recovered_{side}": rows["transcoder"][c]["recovered"],
            f"sae_recovered_{side}": rows["sae"][c]["recovered"],
            f"transcoder_l0_{side}": rows["transcoder"][c]["l0"], f"sae_l0_{side}": rows["sae"][c]["l0"],
            f"transcoder_dead_max_{side}": max(r["dead_fraction"] for r in rows["transcoder"]),
            f"sae_dead_max_{side}": max(r["dead_fraction"] for r in rows["sae"]),
            f"transcoder_best_recovered_{side}": max(r["recovered"] for r in rows["transcoder"]),
        })
        info[f"layer_{side}"] = {"layer": layer, "overlap": overlap, **rows}
        for kind, r in rows.items():
            arrays[f"{side}_{kind}_l0"] = np.array([q["l0"] for q in r])
            arrays[f"{side}_{kind}_recovered"] = np.array([q["recovered"] for q in r])
        print(side, layer, metrics, flush=True)
    metrics["frontier_gap_min"] = min(metrics[f"frontier_gap_{s}"] for s in SIDES)
    metrics["untrained_transcoder_recovered_max"] = max(metrics[f"untrained_transcoder_recovered_{s}"] for s in SIDES)
    metrics["transcoder_dead_max"] = max(metrics[f"transcoder_dead_max_{s}"] for s in SIDES)
    metrics["dead_gap_max"] = max(metrics[f"transcoder_dead_max_{s}"] - metrics[f"sae_dead_max_{s}"] for s in SIDES)
    metrics["transcoder_recovered_min"] = min(metrics[f"transcoder_recovered_{s}"] for s in SIDES)
    metrics["zero_ablation_ce_increase_min"] = min(metrics[f"zero_ablation_ce_increase_{s}"] for s in SIDES)
    arrays["layers"] = np.array(p["layers"])
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)


if __name__ == "__main__":
    main()
