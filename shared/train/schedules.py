"""Learning-rate schedules, one signature each: (base learning rate, step, number of steps, ...).

As lr_policy of shared.train.loop.fit: `lambda lr, step: cosine_lr(lr, step, steps)`, or per epoch with
`loop.epochwise(cosine_lr, steps_per_epoch, epochs)`. A constant rate is no policy at all.
"""
import math


def cosine_lr(base_lr, step, steps, min_ratio=0.0):
    """Cosine from base_lr at step 0 to base_lr * min_ratio at `steps` (CosineAnnealingLR with eta_min).

    With min_ratio = 0 it is CosineAnnealingLR(T_max=steps, eta_min=0) evaluated at the start of `step`.
    """
    floor = base_lr * min_ratio
    return floor + (base_lr - floor) * 0.5 * (1.0 + math.cos(math.pi * step / steps))


def quarter_cosine_lr(base_lr, step, steps, offset=0.0):
    """base_lr cos(pi step / (2 steps)) + offset: a quarter cosine period, from base_lr + offset down to offset at
    `steps` (B-cos networks' official schedule, 1e-3 cos(pi e / 200) + 1e-5 at 100 epochs)."""
    return base_lr * math.cos(math.pi * step / (2 * steps)) + offset


def linear_lr(base_lr, step, steps, warmup):
    """Linear warm-up over `warmup` steps, then linear decay to 0 at `steps`."""
    if step < warmup:
        return base_lr * (step + 1) / warmup
    return base_lr * max(0.0, (steps - step) / max(1, steps - warmup))


def warmup_cosine_lr(base_lr, step, steps, warmup, start_lr):
    """Linear warm-up from start_lr to base_lr over `warmup` steps, then cosine from base_lr to 0 at `steps`."""
    if step < warmup:
        return start_lr + (base_lr - start_lr) * step / warmup
    return cosine_lr(base_lr, step - warmup, steps - warmup)
