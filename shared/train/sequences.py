"""Training loop for sequence models on freshly sampled state-tracking sequences (shared.data.sequence_tasks).
Not on shared.train.loop.fit: a sweep's per-run rates rescale each stacked model's update around optimizer.step(),
and the stack clips each member's gradient by its own norm, which fit's hooks (after the step) cannot express.

Every run has its own seed and task; its batches are drawn from a generator seeded by that seed alone, and the
length of every batch comes from one fixed schedule (`StepSchedule.length_seed`), the same for every run. So a run's
numbers do not depend on which other runs it was trained beside. Runs of one architecture train together in a
`shared.train.stacked.Stack` (one set of kernels for all of them); `stacked=False` trains the same runs one after another,
with the same maths, for models vmap cannot batch and for the speed benchmark.

Loss: cross-entropy on the state after every token (per-step supervision). Adam with a cosine decay to
`min_lr_ratio * lr`, and each model's gradient clipped to `clip` by its own norm. A run may name its own learning
rate (`SeqRun.lr`), so that the rates of a sweep train in one stack: Adam's step direction does not depend on the
rate, so the stack takes a step at rate 1 and each model keeps its own rate's fraction of it (the same step as
training alone, up to rounding).
"""
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from shared.data.sequence_tasks import sample, train_length
from shared.io.runtime import generator
from shared.train.progress import Progress
from shared.train.schedules import cosine_lr
from shared.io.smoke import capped
from shared.train.stacked import Stack


@dataclass(frozen=True)
class SeqRun:
    name: str
    seed: int
    task: object  # shared.data.sequence_tasks.Task
    lr: float | None = None  # None: the schedule's rate


@dataclass(frozen=True)
class StepSchedule:
    steps: int
    batch_size: int = 64
    lr: float = 1e-2
    min_lr_ratio: float = 0.01
    clip: float = 1.0
    min_length: int = 2
    max_length: int = 10
    length_seed: int = 12345
    log_every: int = 100
    progress: bool = True

    def expected_tokens(self, runs=1):
        """Tokens `runs` runs see over the schedule (batch lengths are uniform in [min_length, max_length])."""
        return runs * self.steps * self.batch_size * (self.min_length + self.max_length) / 2



def train_runs(models, runs, schedule, device, stacked=True, label=None):
    """Train `models` ({name: module mapping tokens (B, T) to logits (B, T, states)}) in place, all of one
    architecture; return {name: [{"step", "loss", "acc"}, ...]} logged every `log_every` steps. Progress
    (shared.train.progress) is shown under `label` (default: "train N runs"; "run i of N" one after another)."""
    if sorted(models) != sorted(r.name for r in runs):
        raise ValueError("runs and models must name the same runs")
    if not stacked:
        history = {}
        for i, run in enumerate(runs):
            one = f"run {i + 1} of {len(runs)}" if label is None else f"{label}, run {i + 1} of {len(runs)}"
            history.update(train_runs({run.name: models[run.name]}, [run], schedule, device, stacked=True, label=one))
        return history
    members = [models[r.name].to(device).train() for r in runs]
    net = Stack(members).to(device) if len(members) > 1 else None
    params = list(net.parameters()) if net else list(members[0].parameters())
    lrs = [r.lr or schedule.lr for r in runs]
    per_run = len(set(lrs)) > 1  # rates differ within the stack: step at rate 1, then scale each model's step
    base_lr = 1.0 if per_run else lrs[0]
    run_lrs = torch.tensor(lrs, device=device)
    optimizer = torch.optim.Adam(params, lr=base_lr)
    data_gens = [generator(r.seed) for r in runs]  # on CPU: the same sequences on every device
    length_gen = generator(schedule.length_seed)
    history = {r.name: [] for r in runs}
    bar = Progress(schedule.steps, label or f"train {len(runs)} runs", enabled=schedule.progress)
    for step in capped(bar, schedule.steps, "train_sequences"):
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr(base_lr, step, schedule.steps, schedule.min_lr_ratio)
        length = train_length(schedule.min_length, schedule.max_length, length_gen)
        batches = [sample(r.task, schedule.batch_size, length, g) for r, g in zip(runs, data_gens)]
        tokens = torch.stack([b[0] for b in batches]).to(device)
        states = torch.stack([b[1] for b in batches]).to(device)
        if net is not None:
            logits = net(tokens)
        else:
            logits = members[0](tokens[0]).unsqueeze(0)
        losses = F.cross_entropy(logits.flatten(1, 2).transpose(1, 2), states.flatten(1), reduction="none").mean(1)
        optimizer.zero_grad(set_to_none=True)
        losses.sum().backward()  # the sum: each model's gradient is that of its own loss
        if net is not None:
            net.clip_grad_norm_(schedule.clip)
        else:
            torch.nn.utils.clip_grad_norm_(params, schedule.clip)
        before = [p.detach().clone() for p in params] if per_run else None
        optimizer.step()
        if per_run:
            with torch.no_grad():
                for p, old in zip(params, before):
                    p.copy_(old + run_lrs.view(-1, *[1] * (p.dim() - 1)) * (p - old))
        if step % schedule.log_every == 0 or step == schedule.steps - 1:
            acc = (logits.detach().argmax(-1) == states).float().mean((1, 2))
            for r, loss, a in zip(runs, losses.detach().tolist(), acc.tolist()):
                history[r.name].append({"step": step + 1, "loss": loss, "acc": a, "length": length})
            bar.set_loss(losses.detach().mean().item())
    if net is not None:
        net.unstack_into(members)
    return history


@torch.no_grad()
def accuracy_by_position(model, tokens, states, chunk=512, **forward_kw):
    """Per-position accuracy (T,) of a model on test sequences: position t is the final-state accuracy of the
    length-t prefixes. `forward_kw` go to the model's forward (e.g. a BilinearRNN evaluation mode)."""
    model.eval()
    correct = torch.zeros(tokens.shape[1])
    for i in range(0, len(tokens), chunk):
        logits = model(tokens[i : i + chunk], **forward_kw)
        correct += (logits.argmax(-1) == states[i : i + chunk]).float().sum(0).cpu()
    return correct / len(tokens)


def timed(fn, *args, device=None, **kw):
    """(result, seconds), synchronizing CUDA so the time covers the work and not just its launch."""
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
    return out, time.perf_counter() - t0
