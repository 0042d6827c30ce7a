"""Next-token training of a language model on one token stream, and reading MLP activations back out of it.

Training windows start at random offsets of the stream (drawn by a seeded generator, so the data order depends
only on the seed); evaluation uses fixed, non-overlapping windows. AdamW with linear warmup then linear decay to
zero (the HF Trainer's 'linear' schedule the paper used, App G.2).
"""
import time
from dataclasses import dataclass

import torch

from shared.io.runtime import generator
from shared.train.loop import fit
from shared.train.progress import Progress
from shared.train.schedules import linear_lr


@dataclass(frozen=True)
class LMSchedule:
    steps: int
    batch_size: int
    lr: float
    betas: tuple = (0.9, 0.95)
    weight_decay: float = 0.1
    warmup: int = 0
    eval_every: int = 100



def random_windows(tokens, n, length, gen):
    """n windows of `length` tokens at offsets drawn from `gen`: (n, length)."""
    starts = torch.randint(len(tokens) - length + 1, (n,), generator=gen)
    return tokens[starts[:, None] + torch.arange(length)]


def fixed_windows(tokens, n, length):
    """The first n non-overlapping windows of the stream: (n, length)."""
    n = min(n, len(tokens) // length)
    return tokens[: n * length].view(n, length)


def document_starts(tokens, n, length, bos):
    """Offsets of up to n windows of `length` tokens that each start at a document's first token (`bos`), as the
    paper's evaluation sequences do (each starts with [BOS], which the analyses then drop)."""
    return (tokens[: len(tokens) - length + 1] == bos).nonzero().flatten()[:n]


def windows_at(values, starts, length):
    """The windows of `length` of a stream (or of any per-token array aligned with it) at `starts`: (n, length)."""
    return values[starts[:, None] + torch.arange(length)]


@torch.no_grad()
def evaluate_lm(model, windows, batch_size=64):
    model.eval()
    losses = [model.loss(windows[i : i + batch_size]) * len(windows[i : i + batch_size])
              for i in range(0, len(windows), batch_size)]
    model.train()
    return (sum(losses) / len(windows)).item()


def train_lm(model, train_tokens, val_windows, schedule, seed, device, progress=True, label="lm"):
    """Train in place; return the history: one row per evaluation with step, tokens seen, train and validation
    loss and the training wall time so far (evaluation excluded)."""
    model.to(device).train()
    val_windows = val_windows.to(device)
    gen = generator(seed)  # windows drawn on CPU: the same data order on every device
    batches = (random_windows(train_tokens, schedule.batch_size, model.n_ctx + 1, gen).to(device)
               for _ in range(schedule.steps))
    history, loss_sum = [], torch.zeros((), device=device)
    train_s, t0 = 0.0, time.perf_counter()
    bar = Progress(schedule.steps, label, enabled=progress)  # shared.train.progress: a bar on a terminal, else lines

    def on_step(step, loss):
        nonlocal train_s, t0
        loss_sum.add_(loss.detach())
        if device.type == "cuda":
            torch.cuda.synchronize(device)  # time the work, not its launch
        train_s += time.perf_counter() - t0
        if (step + 1) % schedule.eval_every == 0 or step + 1 == schedule.steps:
            since = step + 1 - (history[-1]["step"] if history else 0)
            history.append({"step": step + 1, "tokens": (step + 1) * schedule.batch_size * model.n_ctx,
                            "train_loss": loss_sum.item() / since, "val_loss": evaluate_lm(model, val_windows),
                            "train_seconds": train_s})
            bar.set_loss(history[-1]["train_loss"])
            loss_sum.zero_()
        t0 = time.perf_counter()  # the evaluation is not training time

    fit(model, batches, steps=schedule.steps, loss_fn=lambda model, batch: model.loss(batch),
        make_optimizer=lambda model: torch.optim.AdamW(model.parameters(), lr=schedule.lr, betas=schedule.betas,
                                                       weight_decay=schedule.weight_decay),
        lr_policy=lambda base, step: linear_lr(base, step, schedule.steps, schedule.warmup),
        on_step=on_step, progress=bar)
    return history


@torch.no_grad()
def mlp_activations(model, windows, layer, batch_size=64, skip_first=1):
    """MLP input and output of `layer` for every position of `windows` (n, T) except the first `skip_first`
    (the paper drops BOS): two (n * (T - skip_first), d_model) tensors, and the tokens at those positions."""
    model.eval()
    ins, outs = [], []
    for i in range(0, len(windows), batch_size):
        cache = {}
        model(windows[i : i + batch_size], cache=cache, layers={layer})
        ins.append(cache[layer, "mlp_in"][:, skip_first:].flatten(0, 1))
        outs.append(cache[layer, "mlp_out"][:, skip_first:].flatten(0, 1))
    return torch.cat(ins), torch.cat(outs), windows[:, skip_first:].flatten()
