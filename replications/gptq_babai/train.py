"""Train the MLP(s) whose layers are quantized (one per seed, shared.train.supervised.train: AdamW, cross-entropy,
per-epoch cosine); write one safetensors checkpoint and its history."""
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
    specs = [{"name": f"seed{seed}", "seed": seed, "d_input": p["d_input"], "n_classes": p["n_classes"],
              "hidden": p["hidden"]} for seed in p["seeds"]]
    models = {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))
        models[spec["name"]] = build(spec)
    runs = [Run(s["name"], s["seed"], 0.0, p["weight_decay"]) for s in specs]
    schedule = EpochSchedule(epochs=p["epochs"], batch_size=p["batch_size"], lr=p["lr"])
    history = train(models, runs, data, schedule, run.device)
    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment="mlp", final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(specs)} models, {meta['wall_seconds']:.1f} s; " + ", ".join(f"{n} {f['test_acc']:.4f}"
                                                                          for n, f in final.items()))


if __name__ == "__main__":
    main()
