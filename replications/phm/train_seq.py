"""Train the sequence classifiers of common.seq_specs (a one-block Transformer encoder with dense maps, PHM at each
n, and the bag of words) on the generated agreement task, one model at a time on the run's device; the batches depend
on the seed only, so every arm of a seed sees the same ones."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.classifier import fit_classifier

from .common import agreement_data, seq_specs
from .model import build


def main():
    run = start_run("checkpoint", "history")
    s = run.params["seq"]
    x, y = agreement_data(s, "train")
    data = {"x_train": x, "y_train": y}
    models, history = {}, {}
    for spec in seq_specs(run.params):
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        history[spec["name"]] = fit_classifier(
            model, data["x_train"], data["y_train"], batch_size=s["batch_size"], epochs=s["epochs"], lr=s["lr"],
            generator=run.generator(spec["seed"], "batches"), device=run.device)
        models[spec["name"]] = model.cpu()
        print(f"{spec['name']} ({spec['body_params']} block params): final train loss "
              f"{history[spec['name']][-1]:.4f}", flush=True)
    meta = run.save(run.args.checkpoint, models, seq_specs(run.params), experiment="seq")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} sequence models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
