"""Train one group of image models (compare or sweep, common.specs), one model at a time on the run's device."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import load_image_data, specs, train_model
from .model import build, n_params


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    data = load_image_data(run.args.data)
    models, history = {}, {}
    runs = specs(p, p["group"])
    for spec in runs:
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        spec["params"] = n_params(model)
        # the batch order depends on the seed only: every kind of one seed sees the same batches
        history[spec["name"]] = train_model(model, data, p["train"], run.generator(spec["seed"], "batches"),
                                            run.device)
        models[spec["name"]] = model.cpu()
        print(f"{spec['name']}: {spec['params']} params, final train loss {history[spec['name']][-1]['train_loss']:.4f}"
              if history[spec["name"]] else spec["name"], flush=True)
    meta = run.save(run.args.checkpoint, models, runs, experiment=p["group"])
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(runs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
