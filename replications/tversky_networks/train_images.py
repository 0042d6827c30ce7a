"""Train the MNIST heads of common.image_specs (Tversky, linear, parameter-matched ReLU MLP) per seed; the batches
depend on the seed only, so the arms of a seed see the same ones."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import image_specs, load_image_data, train_head
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    e = run.params["images"]
    data = load_image_data(run.args.data)
    models, history = {}, {}
    for spec in image_specs(run.params):
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        history[spec["name"]] = train_head(model, data, e, run.generator(spec["seed"], "batches"), run.device)
        models[spec["name"]] = model.cpu()
        print(f"{spec['name']} ({spec['params']} params): final train loss {history[spec['name']][-1]:.4f}", flush=True)
    meta = run.save(run.args.checkpoint, models, image_specs(run.params), experiment="images")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} heads, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
