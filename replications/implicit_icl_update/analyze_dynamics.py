"""Token-by-token implicit dynamics (E2, E6): the marginal updates ||dW_{i+1} - dW_i||_F as the context is consumed,
for trained and untrained attention blocks and a GRU contextual layer, averaged over test prompts (float64)."""
import numpy as np
import torch

from shared.nn import implicit_update as iu
from shared.pipeline.run import start_run, write_metrics

from .common import load_models, test_prompts, trained


@torch.no_grad()
def main():
    run = start_run("checkpoint", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.checkpoint)
    z, _ = test_prompts(run, p)
    metrics, arrays = {}, {}
    for model_name in ("attn", "attn_skip", "linear", "gru"):
        for suffix in ("", "_init"):
            curves = []
            for name in trained(specs, model_name):
                model = models[name + suffix]
                prefix = iu.prefix_activations(model.contextual, z[:, :-1], z[:, -1])
                curves.append(iu.marginal_norms(iu.token_updates(model.mlp[0].W, prefix)).mean(0).numpy())
            if not curves:
                continue
            curve = np.mean(curves, axis=0)  # index i: ||W_{i+1} - W_i||, i = 0 .. n-1
            key = model_name + ("_untrained" if suffix else "")
            arrays[key] = curve
            # the dossier's i = 49 vs i = 1 (n = 50): the last marginal update over the second
            metrics[f"ratio_{key}"] = float(curve[-1] / curve[1])
    if "ratio_attn" in metrics and "ratio_attn_untrained" in metrics:
        metrics["untrained_minus_trained_attn"] = metrics["ratio_attn_untrained"] - metrics["ratio_attn"]
    # the decay against the same block at initialisation: softmax averaging alone shrinks the updates by O(1/i)
    for name in ("attn", "attn_skip"):
        if f"ratio_{name}" in metrics and f"ratio_{name}_untrained" in metrics:
            metrics[f"ratio_{name}_over_untrained"] = metrics[f"ratio_{name}"] / metrics[f"ratio_{name}_untrained"]
    write_metrics(run.args.metrics, metrics, meta, info={"test_tasks": len(z), "n": z.shape[1] - 1},
                  arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
