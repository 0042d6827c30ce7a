"""Train every arm of common.ARMS for every seed of one experiment, one model at a time on the run's device. The
batches depend on the seed only, so every arm of a seed sees the same ones (the same budget: steps, batches, Adam
settings)."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import load_data, specs, train_classifier
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    data = load_data(run.args.data)
    models, history = {}, {}
    for spec in specs(p):
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        history[spec["name"]] = train_classifier(model, data, p["train"], p["spec"]["epochs"],
                                                 run.generator(spec["seed"], "batches"), run.device)
        models[spec["name"]] = model.cpu()
        last = history[spec["name"]][-1] if history[spec["name"]] else float("nan")  # a capped smoke run
        print(f"{spec['name']} ({spec['params']} params): final train loss {last:.4f}", flush=True)
    meta = run.save(run.args.checkpoint, models, specs(p), experiment=p["experiment"])
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
