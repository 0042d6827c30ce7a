"""Train one model per seed in a single batched run; write one safetensors checkpoint and its history.

shared.train.supervised.train is AdamW, cross-entropy and a per-epoch cosine; for another loss, optimizer, schedule,
augmentation, snapshots or a stream of fresh samples, write the step's parts as hooks of shared.train.loop.fit."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.supervised import EpochSchedule, Run, train

from .common import load_data
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # the resolved config of this tier (see rules.smk)
    data = load_data(run.args.data)
    specs = [{"name": f"seed{seed}", "seed": seed, "d_input": p["d_input"], "n_classes": p["n_classes"], **p["model"]}
             for seed in p["seeds"]]

    models = {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))  # init depends only on the run's seed
        models[spec["name"]] = build(spec)
    runs = [Run(s["name"], s["seed"], p["noise_std"], p["weight_decay"]) for s in specs]
    schedule = EpochSchedule(epochs=p["epochs"], batch_size=p["batch_size"], lr=p["lr"])
    history = train(models, runs, data, schedule, run.device)

    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment="model", final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(specs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}; "
          + ", ".join(f"{n} {f['test_acc']:.4f}" for n, f in final.items()))


if __name__ == "__main__":
    main()
