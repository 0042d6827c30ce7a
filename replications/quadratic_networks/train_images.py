"""Train the image runs (trainability): the collapse grid and the ReLinear gamma sweep of common.image_specs, one
model at a time on the run's device. A run whose loss turns non-finite stops there and is recorded as diverged."""

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import image_specs, load_image_data, train_image_model
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    e = run.params["images"]
    data = load_image_data(run.args.data, e["arch"])
    specs = image_specs(run.params)
    models, history, diverged = {}, {}, {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        # the batches depend on the seed only: the ReLinear run with gamma = 0 sees exactly the conventional run's
        history[spec["name"]], diverged[spec["name"]] = train_image_model(
            model, spec, data, e, run.generator(spec["seed"], "batches"), run.device)
        models[spec["name"]] = model.cpu()
        last = history[spec["name"]][-1]["train_loss"] if history[spec["name"]] else float("nan")
        print(f"{spec['name']}: diverged at step {diverged[spec['name']]}" if diverged[spec["name"]] is not None
              else f"{spec['name']}: final train loss {last:.4f}", flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment="images")
    write_json(run.args.history, {**meta, "history": history, "diverged": diverged})
    print(f"{len(specs)} image models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
