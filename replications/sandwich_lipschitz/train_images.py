"""Train the image classifiers: sandwich and Cayley-orthogonal MLPs at each gamma and a plain ReLU MLP per seed,
the official optimiser and schedule, the official offset cross-entropy (CIFAR-100 / Tiny-ImageNet runs). One
checkpoint, and the untrained sandwich networks of the first seed (the certified-accuracy control) in another."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import image_specs, load_image_data, offset_cross_entropy, train
from .model import build


def main():
    run = start_run("data", "checkpoint", "untrained", "history")
    e = run.params["images"]
    data = load_image_data(run.args.data)
    loss = offset_cross_entropy(e["loss"]["offset"], e["loss"]["temperature"])
    specs = image_specs(e)
    models, untrained, history = {}, {}, {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        if spec["kind"] == "sandwich" and spec["seed"] == e["seeds"][0]:
            untrained[spec["name"]] = build(spec)
            untrained[spec["name"]].load_state_dict(model.state_dict())  # a copy of the start of training
        history[spec["name"]] = train(model, data["x_train"], data["y_train"], loss, e["epochs"], e["batch_size"],
                                      e["lr"], run.generator(spec["seed"], "batches"), run.device)
        models[spec["name"]] = model.cpu()
        print(f"{spec['name']}: final train loss {history[spec['name']][-1]:.4f}", flush=True)
    run.save(run.args.untrained, untrained, [s for s in specs if s["name"] in untrained], experiment="untrained")
    meta = run.save(run.args.checkpoint, models, specs, experiment="images")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(specs)} image models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
