"""Train every model of the config (CNN with biases, the same CNN without, bilinear MLP) at every seed, in one run:
run `<model>_s<seed>`."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.supervised import EpochSchedule, Run, train

from .common import load_data
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    data = load_data(run.args.data)
    # the mnist_5k splits are sorted by class; the trainer draws a fresh permutation per epoch, so no shuffle here
    specs = [{"name": f"{name}_s{seed}", "seed": seed, "n_classes": p["n_classes"], **p["image"], **model}
             for seed in p["seeds"] for name, model in p["models"].items()]
    models = {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))
        models[spec["name"]] = build(spec)
    runs = [Run(s["name"], s["seed"], 0.0, p["weight_decay"]) for s in specs]
    schedule = EpochSchedule(epochs=p["epochs"], batch_size=p["batch_size"], lr=p["lr"])
    history = train(models, runs, data, schedule, run.device)
    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment="models", final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(specs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}; "
          + ", ".join(f"{n} {f['test_acc']:.4f}" for n, f in final.items()))


if __name__ == "__main__":
    main()
