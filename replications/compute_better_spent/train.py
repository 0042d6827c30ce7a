"""Train one arm of the sweep: every (structure, width) of the config at the tuned base lr, with the structure-aware
learning rates ('aware': muP per factor / k) or the naive ones ('naive': the dense layer's multiplier for every
factor). The dense model is the same in both arms (one factor per layer), so the naive arm skips it. Every run
is trained once per seed (run `<arm>-<structure>-w<width>-s<seed>`); the models of one seed see the same batches. Writes the history and final metrics of each run as JSON (no checkpoint is kept)."""
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
    runs = {}
    for seed in p["seeds"]:
        order = batches(len(data["y_train"]), p["batch_size"], p["steps"], run.generator(seed, "batches"))
        for structure, widths in p["widths"].items():
            if arm == "naive" and structure == "dense":
                continue
            for width in widths:
                spec = spec_of(p, structure, width)
                torch.manual_seed(seed)
                model, rows = build(spec, arm, run.generator(seed, "init"))
                model.to(run.device)
                base = dense_base_multipliers(spec, p["base_width"])
                result = train_model(model, param_groups(rows, lr, base_layers=base),
                                     data, order, p["steps"], p["label_smoothing"], p["tail"],
                                     augmentation(p, run.generator(seed, "augment")))
                result.update(structure=structure, width=width, arm=arm, lr=lr, seed=seed,
                              hidden_macs=model.hidden_macs(), total_macs=model.total_macs(),
                              n_params=sum(t.numel() for t in model.parameters()))
                runs[f"{run_name(structure, width, arm)}-s{seed}"] = result
                print(f"{arm} {structure} w={width} seed {seed} macs={model.hidden_macs()}: loss "
                      f"{result['train_loss']:.4f} test err {result['test_error']:.3f}", flush=True)
    meta = run.meta([{"name": name, "seed": r["seed"], "structure": r["structure"], "width": r["width"]}
                     for name, r in runs.items()], experiment=arm)
    write_json(run.args.out, {"arm": arm, "lr": lr, "steps": p["steps"], "runs": runs, "meta": meta})


if __name__ == "__main__":
    main()
