"""Train every run of one experiment in a single batched run; write one safetensors checkpoint and its history."""
import time

from common import load_images
from model import build

from shared.io.checkpoints import save_models
from shared.io.files import write_json
from shared.io.runtime import describe, pick_device, seed_everything
from shared.pipeline.grid import expand_runs
from shared.pipeline.provenance import collect
from shared.pipeline.scripts import parse_args
from shared.train.supervised import EpochSchedule, Run, train


def main():
    args = parse_args("data", "checkpoint", "history")
    p = args.params  # {"experiment": name, "spec": experiment config, "defaults":..., "lr":..., "device":...}
    task = p["spec"].get("task")  # section 4.3: two classes by similarity to a target image
    data = load_images(args.data, task)
    data_std = data["x_train"].std().item()
    specs = []
    for spec in expand_runs(p["spec"], p["defaults"]):
        spec.update(d_input=p["d_input"], n_classes=2 if task else p["n_classes"])
        # The Fig 7 models used noise relative to the data's std; resolve it to the absolute std it amounts to.
        spec["noise_std_abs"] = spec["noise_std"] * data_std if spec["noise_relative"] else spec["noise_std"]
        specs.append(spec)

    models = {}
    for spec in specs:
        seed_everything(spec["seed"])  # init depends only on the run's seed, not on its neighbours in the batch
        models[spec["name"]] = build(spec)
    runs = [Run(s["name"], s["seed"], s["noise_std_abs"], s["weight_decay"]) for s in specs]
    schedule = EpochSchedule(epochs=p["spec"]["epochs"], batch_size=p["spec"]["batch_size"], lr=p["lr"])
    device = pick_device(p["device"])
    t0 = time.perf_counter()
    history = train(models, runs, data, schedule, device)
    wall = time.perf_counter() - t0

    final = {name: h[-1] for name, h in history.items()}
    meta = {"experiment": p["experiment"], "runs": specs, "device": describe(device), "wall_seconds": wall,
            "data_std": data_std, "final": final, "provenance": collect(config=p, device=describe(device))}
    save_models(args.checkpoint, models, meta)
    write_json(args.history, {**meta, "history": history})
    print(f"{p['experiment']}: {len(specs)} models, {wall:.1f} s on {describe(device)}; "
          + ", ".join(f"{n} {f['test_acc']:.4f}" for n, f in list(final.items())[:6]))


if __name__ == "__main__":
    main()
