"""A function of a tensor's rows (a model's logits, a reconstruction), computed a chunk at a time so that a full-size
test or training set fits in memory. A smoke run (shared.io.smoke.capped) computes only a few chunks and fills the
others with zeros: the output keeps its full shape, so the code after it runs as at full size, and its numbers are
never read as results (a smoke run writes no report)."""
import torch

from shared.io.smoke import cap, capped


def chunked(fn, x, chunk, loop, count_flops=False):
    """torch.cat([fn(x[i:i + chunk]) for each chunk]); outside a smoke run exactly that, chunk by chunk."""
    starts = range(0, len(x), chunk)
    if cap() is None:
        return torch.cat([fn(x[i:i + chunk]) for i in starts])
    done = {i: fn(x[i:i + chunk]) for i in capped(starts, len(starts), loop, count_flops)}
    some = next(iter(done.values()))
    return torch.cat([done[i] if i in done else some.new_zeros((len(x[i:i + chunk]), *some.shape[1:]))
                      for i in starts])
