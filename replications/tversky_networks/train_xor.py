"""Train one Tversky projection (2 -> 2, K features, per seed) and one linear layer (2 -> 2 with bias) per seed on
the four XOR points, full-batch Adam; save every model and the loss curves."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import train_xor, xor_specs
from .model import build


def main():
    run = start_run("checkpoint", "history")
    x = run.params["xor"]
    models, history = {}, {}
    for spec in xor_specs(run.params):
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        history[spec["name"]] = train_xor(model, x["steps"], x["lr"])
        models[spec["name"]] = model.cpu()
    meta = run.save(run.args.checkpoint, models, xor_specs(run.params), experiment="xor")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} XOR models, {meta['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
