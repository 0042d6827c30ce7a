"""One training loop with hooks: the step every trainer here repeats, and the parts that differ passed in.

    fit(model, batches, steps=..., loss_fn=..., make_optimizer=..., lr_policy=..., augment=..., on_step=...)

Each step: set each parameter group's learning rate from its base rate (lr_policy), draw the next batch, augment
it, loss_fn(model, batch), zero the gradients, backward, clip, optimizer step, then on_step(step, loss). The hooks
cover what the papers' own loops did: any loss; any optimizer, per-parameter-group rates included (the groups'
`lr` are the base rates the policy scales); a learning rate per step or per epoch (`epochwise`); batches from
`epoch_batches` (a fresh permutation per epoch), with replacement, or any stream of fresh samples; snapshots,
diagnostics and evaluation in on_step (an epoch ends where `(step + 1) % steps_per_epoch == 0`).

The random streams are the caller's: `batches` and `augment` draw from the generators they close over, in the
order the loop asks for them (the batch of a step before its augmentation), so a paper keeps its numbers.
"""
import torch

from shared.io.smoke import capped


def fit(model, batches, *, steps, loss_fn, make_optimizer, lr_policy=None, augment=None, on_step=None, clip=None,
        progress=None):
    """Train `model` (a module, or whatever loss_fn and make_optimizer take, e.g. a dict of modules) in place for
    `steps` optimizer steps; return the optimizer.

    batches: an iterable of batches, read once per step.
    loss_fn(model, batch) -> the scalar loss to minimise.
    make_optimizer(model) -> a torch optimizer; the `lr` of each parameter group is that group's base rate.
    lr_policy(base_lr, step) -> the group's rate for `step` (shared.train.schedules; None: constant).
    augment(batch) -> batch, applied to each batch as it is drawn.
    on_step(step, loss): after the update (loss is the step's loss tensor, not detached).
    clip: clip the gradient norm of all the optimizer's parameters to this (None: no clipping).
    progress: the step indices to run, when they are to be reported (a shared.train.progress.Progress over
        range(steps)); None: range(steps).
    """
    optimizer = make_optimizer(model)
    base_lrs = [group["lr"] for group in optimizer.param_groups]
    params = [p for group in optimizer.param_groups for p in group["params"]]
    batches = iter(batches)
    for step in capped(progress if progress is not None else range(steps), steps, "fit"):
        if lr_policy is not None:
            for group, base in zip(optimizer.param_groups, base_lrs):
                group["lr"] = lr_policy(base, step)
        batch = next(batches)
        if augment is not None:
            batch = augment(batch)
        loss = loss_fn(model, batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
        if on_step is not None:
            on_step(step, loss)
    return optimizer


def epoch_batches(n, batch_size, generator, device="cpu", drop_last=True):
    """Endless index batches: a fresh permutation of range(n) per epoch, drawn on the CPU from `generator` (the same
    order on every device) when the epoch's first batch is asked for, then moved to `device`."""
    while True:
        order = torch.randperm(n, generator=generator).to(device)
        for start in range(0, n - batch_size + 1 if drop_last else n, batch_size):
            yield order[start:start + batch_size]


def with_replacement(n, batch_size, generator, device="cpu"):
    """Endless index batches drawn uniformly with replacement (on the CPU, like epoch_batches)."""
    while True:
        yield torch.randint(0, n, (batch_size,), generator=generator).to(device)


def epochwise(schedule, steps_per_epoch, epochs):
    """An lr_policy that holds `schedule(base_lr, epoch, epochs)` through each epoch."""
    return lambda base_lr, step: schedule(base_lr, step // steps_per_epoch, epochs)
