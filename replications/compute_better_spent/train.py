"""Train one arm of the sweep: every (structure, width) of the config at the tuned base lr, with the structure-aware
learning rates ('aware': muP per factor / k) or the naive ones ('naive': the dense layer's multiplier for every
factor). The dense model is the same in both arms (one factor per layer), so the naive arm skips it. All models see
the same batches. Writes the history and final metrics of each run as JSON (no checkpoint is kept)."""
import torch

from shared.io.files import read_json, write_json
from shared.nn.parametrization import param_groups
from shared.pipeline.run import start_run

from .common import augmentation, batches, load_images, run_name, spec_of, to_device, train_model
from .model import build, dense_base_multipliers


def main():
    run = start_run("data", "lr", "out")
    p = run.params
    arm = p["arm"]
    data = to_device(load_images(run.args.data), run.device)
    lr = read_json(run.args.lr)["lr"]
    order = batches(len(data["y_train"]), p["batch_size"], p["steps"], run.generator(p["seed"], "batches"))
    runs = {}
    for structure, widths in p["widths"].items():
        if arm == "naive" and structure == "dense":
            continue
        for width in widths:
            spec = spec_of(p, structure, width)
            torch.manual_seed(p["seed"])
            model, rows = build(spec, arm, run.generator(p["seed"], "init"))
            model.to(run.device)
            base = dense_base_multipliers(spec, p["base_width"])
            result = train_model(model, param_groups(rows, lr, base_layers=base),
                                 data, order, p["steps"], p["label_smoothing"], p["tail"],
                                 augmentation(p, run.generator(p["seed"], "augment")))
            result.update(structure=structure, width=width, arm=arm, lr=lr, hidden_macs=model.hidden_macs(),
                          total_macs=model.total_macs(), n_params=sum(t.numel() for t in model.parameters()))
            runs[run_name(structure, width, arm)] = result
            print(f"{arm} {structure} w={width} macs={model.hidden_macs()}: loss {result['train_loss']:.4f} "
                  f"test err {result['test_error']:.3f}", flush=True)
    meta = run.meta([{"name": name, "seed": p["seed"], "structure": r["structure"], "width": r["width"]}
                     for name, r in runs.items()], experiment=arm)
    write_json(run.args.out, {"arm": arm, "lr": lr, "steps": p["steps"], "runs": runs, "meta": meta})


if __name__ == "__main__":
    main()
