"""Train every run of one group (grid, standard or mnist; common.specs), one after another on the run's device.
Runs of the same seed start from the same weights and see the same batches. One checkpoint and its history."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import load_data, specs, train_run
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    group = p["group"]
    e = p[group]
    data = {k: v.to(run.device) for k, v in load_data(run.args.data, p["per_class"]).items()}
    runs = specs(p, group)
    models, history = {}, {}
    for spec in runs:
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec).to(run.device)
        history[spec["name"]] = train_run(model, spec, data, e, run.generator(spec["seed"], "batches"))
        models[spec["name"]] = model.cpu()
        h = history[spec["name"]]
        print(f"{spec['name']}: test acc {h['test_acc'][-1]:.4f}, rotation "
              + " ".join(f"{r:.3f}" for r in h["rotation"][-1]), flush=True)
    meta = run.save(run.args.checkpoint, models, runs, experiment=group)
    write_json(run.args.history, {**meta, "history": history, "train_images": len(data["x_train"])})
    print(f"{group}: {len(runs)} runs, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
