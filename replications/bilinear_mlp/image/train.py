"""Train every run of one experiment in a single batched run; write one safetensors checkpoint and its history."""
from shared.data.images import load_images
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.grid import expand_runs
from shared.pipeline.run import start_run
from shared.train.supervised import EpochSchedule, Run, train

from ..model import build
from .target_task import relabel


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # {"experiment": name, "spec": experiment config, "defaults":..., "lr":..., "device":...}
    task = p["spec"].get("task")  # section 4.3: two classes by similarity to a target image
    data = load_images(run.args.data, layout="hwc_flat")
    if task:
        data = relabel(data, task)
    data_std = data["x_train"].std().item()
    specs = []
    for spec in expand_runs(p["spec"], p["defaults"]):
        spec.update(d_input=p["d_input"], n_classes=2 if task else p["n_classes"])
        # The Fig 7 models used noise relative to the data's std; resolve it to the absolute std it amounts to.
        spec["noise_std_abs"] = spec["noise_std"] * data_std if spec["noise_relative"] else spec["noise_std"]
        specs.append(spec)

    models = {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))  # init depends only on the run's seed, not its neighbours
        models[spec["name"]] = build(spec)
    runs = [Run(s["name"], s["seed"], s["noise_std_abs"], s["weight_decay"]) for s in specs]
    schedule = EpochSchedule(epochs=p["spec"]["epochs"], batch_size=p["spec"]["batch_size"], lr=p["lr"])
    history = train(models, runs, data, schedule, run.device)

    final = {name: h[-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment=p["experiment"], data_std=data_std, final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{p['experiment']}: {len(specs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}; "
          + ", ".join(f"{n} {f['test_acc']:.4f}" for n, f in list(final.items())[:6]))


if __name__ == "__main__":
    main()
