"""E1: the in-context validation loss and the validation loss via dW (query only, patched W) over training, and the
trained blocks' test loss against predicting 0."""
import numpy as np
import torch

from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics

from .common import load_models, test_prompts, trained


@torch.no_grad()
def main():
    run = start_run("checkpoint", "history", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.checkpoint)
    history = read_json(run.args.history)["history"]
    z, y = test_prompts(run, p)
    metrics, arrays, rel = {}, {}, []
    for model_name in ("attn", "attn_skip", "linear", "gru"):
        for name in trained(specs, model_name):
            rows = history[name]
            ic = np.array([r["val_in_context"] for r in rows])
            dw = np.array([r["val_via_dw"] for r in rows])
            rel.append(float(np.max(np.abs(ic - dw) / ic)))
            if name == trained(specs, model_name)[0]:
                arrays[f"{model_name}_step"] = np.array([r["step"] for r in rows], float)
                arrays[f"{model_name}_in_context"], arrays[f"{model_name}_via_dw"] = ic, dw
        losses = [((models[n](z) - y) ** 2).mean().item() for n in trained(specs, model_name)]
        if losses:
            metrics[f"test_loss_ratio_{model_name}"] = float(np.mean(losses) / (y ** 2).mean().item())
    metrics["val_via_dw_max_rel_diff"] = max(rel)
    write_metrics(run.args.metrics, metrics, meta, info={"test_tasks": len(z), "zero_loss": (y ** 2).mean().item()},
                  arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
