"""Train the models of one kind (mlp: one per seed; cnn: one per seed) in one batched run; write one safetensors
checkpoint and its history."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.supervised import EpochSchedule, Run, train

from .common import load_data
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # {kind, device, d_input, n_classes, image_shape, <kind>: {...}, optim}
    kind = p["kind"]
    arch = {k: v for k, v in p[kind].items() if k != "seeds"}
    data = load_data(run.args.data)
    specs = [{"name": f"{kind}_seed{seed}", "seed": seed, "kind": kind, "d_input": p["d_input"],
              "n_classes": p["n_classes"], "image_shape": p["image_shape"], **arch} for seed in p[kind]["seeds"]]

    models = {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))  # init depends only on the run's seed
        models[spec["name"]] = build(spec)
    o = p["optim"]
    runs = [Run(s["name"], s["seed"], 0.0, o["weight_decay"]) for s in specs]
    schedule = EpochSchedule(epochs=o["epochs"], batch_size=o["batch_size"], lr=o["lr"])
    history = train(models, runs, data, schedule, run.device, label=f"train {kind}")

    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment=kind, final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(specs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}; "
          + ", ".join(f"{n} {f['test_acc']:.4f}" for n, f in final.items()))


if __name__ == "__main__":
    main()
