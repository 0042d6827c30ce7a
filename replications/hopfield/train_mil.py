"""Train the multiple-instance learners (MNIST bags: does the bag hold a `target` digit?): one model per pooling and
seed, Adam on the bags' binary cross-entropy, minibatches of padded bags with a mask. One checkpoint."""
import torch
import torch.nn.functional as F

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.loop import epoch_batches, fit

from .common import load_digits, mil_bags, mil_specs
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    m = run.params["mil"]
    data = load_digits(run.args.data)
    x = data["x_train"].to(run.device)
    models, history = {}, {}
    per_epoch = m["train_bags"] // m["batch_size"]
    for spec in mil_specs(run.params):
        index, mask, labels = mil_bags(data, m, spec["seed"])["train"]
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec).to(run.device)
        order = epoch_batches(len(index), m["batch_size"], run.generator(spec["seed"], "order"))
        losses = []
        fit(model, ((index[i], mask[i], labels[i]) for i in order), steps=m["epochs"] * per_epoch,
            loss_fn=lambda net, b: F.binary_cross_entropy_with_logits(
                net(x[b[0].to(run.device)], b[1].to(run.device)), b[2].to(run.device)),
            make_optimizer=lambda net: torch.optim.Adam(net.parameters(), lr=m["lr"], weight_decay=m["weight_decay"]),
            on_step=lambda step, loss: losses.append(loss.item()))
        models[spec["name"]] = model.cpu()
        history[spec["name"]] = {"final_loss": sum(losses[-per_epoch:]) / max(1, len(losses[-per_epoch:]))}
    meta = run.save(run.args.checkpoint, models, mil_specs(run.params), experiment="mil")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} MIL models, {meta['wall_seconds']:.1f} s; "
          + ", ".join(f"{n} {h['final_loss']:.3f}" for n, h in history.items()))


if __name__ == "__main__":
    main()
