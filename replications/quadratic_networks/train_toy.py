"""Train the toy runs (expressivity): a single neuron of each kind on XOR and on a disk (logistic loss), and a quadratic
net against a conventional ReLU net of at least as many parameters on x1 x2 and ||x||^2 (mean squared error).
Full batch, Adam with a cosine schedule, float64 (the exact representations are the point). One checkpoint."""
import torch
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.loop import fit
from shared.train.schedules import cosine_lr

from .common import CLASSIFY, toy_data, toy_specs
from .model import build


def forever(batch):
    while True:
        yield batch


def main():
    run = start_run("checkpoint", "history")
    t = run.params["toy"]
    specs = toy_specs(run.params)
    models, history = {}, {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec).double()
        x, y = toy_data(spec["task"], t["train_points"], t["radial_dim"], run.generator(spec["seed"], "train"))
        classify = spec["task"] in CLASSIFY
        steps, lr = (t["classify" if classify else "regress"][k] for k in ("steps", "lr"))
        loss = (lambda m, b: F.binary_cross_entropy_with_logits(m(b[0])[:, 0], b[1])) if classify else \
            (lambda m, b: F.mse_loss(m(b[0])[:, 0], b[1]))
        losses = []
        fit(model, forever((x, y)), steps=steps, loss_fn=loss,
            make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=lr),
            lr_policy=lambda base, step: cosine_lr(base, step, steps), on_step=lambda s, l: losses.append(l.item()))
        models[spec["name"]], history[spec["name"]] = model.float(), losses[-1:]
    meta = run.save(run.args.checkpoint, models, specs, experiment="toy")
    write_json(run.args.history, {**meta, "final_loss": history})
    print(f"{len(specs)} toy models, {meta['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
