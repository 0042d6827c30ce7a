"""Train the toy runs (the paper's Tab. 1 / Fig. 3): sandwich and Cayley-orthogonal networks at each gamma and a
plain ReLU MLP on the square wave, MSE, the official optimiser and schedule. One checkpoint, and the untrained
sandwich networks of the first seed (the tightness control) in another."""
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import toy_data, toy_specs, train
from .model import build


def main():
    run = start_run("checkpoint", "untrained", "history")
    t = run.params["toy"]
    specs = toy_specs(t)
    models, untrained, history = {}, {}, {}
    for spec in specs:
        x, y, _, _ = toy_data(t["train_points"], t["test_points"], run.generator(spec["seed"], "data"))
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        if spec["kind"] == "sandwich" and spec["seed"] == t["seeds"][0]:
            untrained[spec["name"]] = build(spec)
            untrained[spec["name"]].load_state_dict(model.state_dict())  # a copy of the start of training
        history[spec["name"]] = train(model, x, y, F.mse_loss, t["epochs"], t["batch_size"], t["lr"],
                                      run.generator(spec["seed"], "batches"))
        models[spec["name"]] = model
        print(f"{spec['name']}: final train MSE {history[spec['name']][-1]:.5f}", flush=True)
    untrained_specs = [s for s in specs if s["name"] in untrained]
    run.save(run.args.untrained, untrained, untrained_specs, experiment="toy-untrained")
    meta = run.save(run.args.checkpoint, models, specs, experiment="toy")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(specs)} toy models, {meta['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
