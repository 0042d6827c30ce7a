"""Train the image MLPs of common.image_specs (dense, PHM at each n, quaternion, parameter-matched dense, linear),
one model at a time on the run's device; the batches depend on the seed only, so every arm of a seed sees the same
ones."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.classifier import fit_classifier

from .common import image_specs, load_image_data
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    e = run.params["images"]
    data = load_image_data(run.args.data)
    models, history = {}, {}
    for spec in image_specs(run.params):
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        history[spec["name"]] = fit_classifier(
            model, data["x_train"], data["y_train"], batch_size=e["batch_size"], epochs=e["epochs"], lr=e["lr"],
            generator=run.generator(spec["seed"], "batches"), device=run.device)
        models[spec["name"]] = model.cpu()
        print(f"{spec['name']} ({spec['params']} params): final train loss {history[spec['name']][-1]:.4f}",
              flush=True)
    meta = run.save(run.args.checkpoint, models, image_specs(run.params), experiment="images")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} image models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
