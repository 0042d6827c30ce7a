"""A classifier trained on in-memory tensors: Adam, cross-entropy, a fresh permutation of the training rows each
epoch (shared.train.loop.epoch_batches), the rate constant or on a cosine decay per step; the mean training loss of
each epoch comes back. The loop is shared.train.loop.fit, so a smoke run caps it like every other."""
import torch
import torch.nn.functional as F

from shared.train.loop import epoch_batches, fit
from shared.train.schedules import cosine_lr


def fit_classifier(model, x, y, *, batch_size, epochs, lr, generator, device, cosine=True):
    """Train `model` in place on (x, y) for `epochs` epochs of len(x) // batch_size steps; return the mean loss of
    each epoch. generator: the torch.Generator that draws each epoch's order."""
    x, y = x.to(device), y.to(device)
    per_epoch = len(x) // batch_size
    steps = epochs * per_epoch
    model.to(device).train()
    history, total = [], [0.0]

    def on_step(step, loss):
        total[0] += loss.item()
        if (step + 1) % per_epoch == 0:
            history.append(total[0] / per_epoch)
            total[0] = 0.0

    fit(model, ((x[i], y[i]) for i in epoch_batches(len(x), batch_size, generator, device)), steps=steps,
        loss_fn=lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=lr),
        lr_policy=(lambda base, step: cosine_lr(base, step, steps)) if cosine else None, on_step=on_step)
    return history
