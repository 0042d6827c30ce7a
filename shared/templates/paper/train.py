"""Train one model per seed in a single batched run; write one safetensors checkpoint and its history."""
import time

from common import load_data
from model import build

from shared.checkpoints import save_models
from shared.files import write_json
from shared.provenance import collect
from shared.runtime import describe, pick_device, seed_everything
from shared.scripts import parse_args
from shared.training import Run, Schedule, train


def main():
    args = parse_args("data", "checkpoint", "history")
    p = args.params  # the resolved config of this tier (see rules.smk)
    data = load_data(args.data)
    specs = [{"name": f"seed{seed}", "seed": seed, "d_input": p["d_input"], "n_classes": p["n_classes"], **p["model"]}
             for seed in p["seeds"]]

    models = {}
    for spec in specs:
        seed_everything(spec["seed"])  # init depends only on the run's seed, not on its neighbours in the batch
        models[spec["name"]] = build(spec)
    runs = [Run(s["name"], s["seed"], p["noise_std"], p["weight_decay"]) for s in specs]
    schedule = Schedule(epochs=p["epochs"], batch_size=p["batch_size"], lr=p["lr"])
    device = pick_device(p["device"])
    t0 = time.perf_counter()
    history = train(models, runs, data, schedule, device)
    wall = time.perf_counter() - t0

    final = {name: h[-1] for name, h in history.items()}
    meta = {"experiment": "model", "runs": specs, "device": describe(device), "wall_seconds": wall, "final": final,
            "seeds": p["seeds"], "provenance": collect(config=p, seeds=p["seeds"], device=describe(device))}
    save_models(args.checkpoint, models, meta)
    write_json(args.history, {**meta, "history": history})
    print(f"{len(specs)} models, {wall:.1f} s on {describe(device)}; "
          + ", ".join(f"{n} {f['test_acc']:.4f}" for n, f in final.items()))


if __name__ == "__main__":
    main()
