"""Train one model (a B-cos network at one B, or the ReLU baseline) with the official recipe: Adam, binary
cross-entropy on one-hot targets, a per-epoch cosine learning rate lr cos(pi e / (2 E)) + lr_min (the official
CIFAR-10 schedule 1e-3 cos(pi e / 200) + 1e-5 at E = 100), optional random-crop (pad 4) and flip augmentation."""
import torch
import torch.nn.functional as F

from shared.data.augment import crop_flip
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.loop import epoch_batches, epochwise, fit
from shared.train.progress import Progress
from shared.train.schedules import quarter_cosine_lr

from .common import accuracy, load_data
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    data = {k: v.to(run.device) for k, v in load_data(run.args.data).items()}
    spec = {"name": f"{p['arm']}_s{p['seed']}", "arm": p["arm"], "seed": p["seed"], "arch": p["arch"], "b": p["b"],
            "n_classes": p["n_classes"], "in_channels": data["x_train"].shape[1], **p["model"]}
    seed_everything(run.seed(spec["seed"], "init"))
    model = build(spec).to(run.device)
    model.calibrate(data["x_train"][: p["calibration_images"]])
    base_lr = p["relu_lr"] if p["arch"] == "relu" else p["lr"]
    gen = run.generator(spec["seed"], "data")  # one stream: each epoch's order, then that epoch's crops and flips
    x_train, y_train = data["x_train"], data["y_train"]
    per_epoch, epochs = len(x_train) // p["batch_size"], p["epochs"]
    history, loss_sum = [], [0.0]

    def loss_fn(model, batch):
        x, y = batch
        logits = model(x)
        return F.binary_cross_entropy_with_logits(logits, F.one_hot(y, p["n_classes"]).to(logits.dtype))

    def end_of_epoch(step, loss):
        loss_sum[0] += loss.item()
        if (step + 1) % per_epoch == 0:
            model.eval()
            epoch = step // per_epoch
            history.append({"epoch": epoch + 1, "lr": quarter_cosine_lr(base_lr, epoch, epochs, p["lr_min"]),
                            "train_loss": loss_sum[0] / per_epoch,
                            "test_acc": accuracy(model, data["x_test"], data["y_test"], count_flops=False)})
            model.train()
            loss_sum[0] = 0.0

    model.train()
    fit(model, ((x_train[i], y_train[i]) for i in epoch_batches(len(x_train), p["batch_size"], gen, run.device)),
        steps=epochs * per_epoch, loss_fn=loss_fn,
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=base_lr),
        lr_policy=epochwise(lambda lr, e, n: quarter_cosine_lr(lr, e, n, p["lr_min"]), per_epoch, epochs),
        augment=(lambda b: (crop_flip(b[0], gen), b[1])) if p["augment"] else None, on_step=end_of_epoch,
        progress=Progress(epochs * per_epoch, f"train {p['arm']}"))
    meta = run.save(run.args.checkpoint, {spec["name"]: model.cpu()}, [spec], experiment=p["arm"], final=history[-1])
    write_json(run.args.history, {**meta, "history": history})
    print(f"{p['arm']}: test acc {history[-1]['test_acc']:.4f}, train loss {history[-1]['train_loss']:.4f}, "
          f"{meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
