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


def train_one(model, x, y, steps, lr, classify):
    """Full-batch Adam with a cosine schedule; returns the last loss."""
    def loss(m, b):
        out = m(b[0])[:, 0]
        return F.binary_cross_entropy_with_logits(out, b[1]) if classify else F.mse_loss(out, b[1])

    losses = []
    fit(model, forever((x, y)), steps=steps, loss_fn=loss,
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=lr),
        lr_policy=lambda base, step: cosine_lr(base, step, steps), on_step=lambda s, l: losses.append(l.item()))
    return losses[-1]


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
        opt = t["classify" if classify else "regress"]
        history[spec["name"]] = train_one(model, x, y, opt["steps"], opt["lr"], classify)
        models[spec["name"]] = model.float()
    meta = run.save(run.args.checkpoint, models, specs, experiment="toy")
    write_json(run.args.history, {**meta, "final_loss": history})
    print(f"{len(specs)} toy models, {meta['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
