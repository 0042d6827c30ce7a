"""Full-batch training of a stack of small networks on a finite table, as the grokking papers train.
Not on shared.train.loop.fit: its optimisers are written out for the stack (per-member rates and decay, Muon on one
layer) and step from autograd.grad: none of it is a torch.optim optimizer that fit's make_optimizer could return.

Every member sees all pairs in every step; its loss is the mean over its own training mask, so the test accuracy
of the same forward pass comes for free. Members may differ in seed, training mask, learning rate and weight decay
(per-member vectors). The optimiser is written out for the stack, so that each member takes exactly the steps it
would take alone:
  adam  - torch.optim.Adam's update (bias-corrected moments); weight decay "coupled" adds wd * theta to the gradient
          (torch Adam's weight_decay, Li2's setting), "decoupled" shrinks theta by lr * wd (AdamW);
  muon  - Li2's variant on the first layer [left; right] (momentum buffer orthogonalised by Newton-Schulz, no
          Nesterov, scaled by sqrt(max(1, rows/cols))), Adam on the output layer.
History rows are taken before the update of their step: row t describes the weights after t updates.
"""
import torch

from shared.nn.multiplicative import LOSSES
from shared.train.muon import newton_schulz
from shared.train.progress import Progress
from shared.io.smoke import capped


def _per_member(value, members, device):
    value = torch.as_tensor(value, dtype=torch.get_default_dtype(), device=device)
    return value.expand(members).clone() if value.dim() == 0 else value


def _view(vector, like):
    return vector.view(-1, *[1] * (like.dim() - 1))


class StackedAdam:
    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, self.betas, self.eps, self.t = list(params), lr, betas, eps, 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self, grads):
        self.t += 1
        b1, b2 = self.betas
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denominator = (v / (1 - b2 ** self.t)).sqrt_().add_(self.eps)
            p.sub_(_view(self.lr, p) * (m / (1 - b1 ** self.t)) / denominator)


class StackedMuon:
    """Muon for a stack of (rows, cols) matrices: `update(grad)` returns the step to subtract, per member."""

    def __init__(self, lr, momentum=0.9, ns_steps=5):
        self.lr, self.momentum, self.ns_steps, self.buffer = lr, momentum, ns_steps, None

    @torch.no_grad()
    def update(self, grad):
        self.buffer = grad.clone() if self.buffer is None else self.buffer.mul_(self.momentum).add_(grad)
        scale = max(1.0, grad.shape[-2] / grad.shape[-1]) ** 0.5
        return _view(self.lr, grad) * scale * newton_schulz(self.buffer, self.ns_steps).to(grad.dtype)


def train_full_batch(model, a, b, labels, train_mask, *, steps, lr, weight_decay=0.0, decay="coupled",
                     optimizer="adam", betas=(0.9, 0.999), eps=1e-8, loss="mse", eval_every=100, on_eval=None,
                     label="train", progress=True):
    """Train a GroupPairNet-like stack (parameters with a leading members axis; forward(a, b) -> (members, N, C)).
    a, b, labels: (N,) every pair of the table; train_mask: (members, N) bool. lr, weight_decay: float or (members,).
    on_eval(step, model) may return a dict of per-member statistics to record. Returns the history: "step" (T,)
    and "train_acc", "test_acc", "train_loss", "test_loss" (T, members), plus what on_eval returned."""
    if decay not in ("coupled", "decoupled"):
        raise ValueError(f"decay {decay!r}: 'coupled' (Adam's L2) or 'decoupled' (AdamW)")
    device = model.left.device
    members = model.members
    train_mask = train_mask.to(device)
    if train_mask.shape != (members, len(labels)):
        raise ValueError(f"train_mask has shape {tuple(train_mask.shape)}, want ({members}, {len(labels)})")
    test_mask = ~train_mask
    lr, wd = _per_member(lr, members, device), _per_member(weight_decay, members, device)
    loss_fn = LOSSES[loss]
    params = [model.left, model.right, model.out]
    if optimizer == "adam":
        adam, muon = StackedAdam(params, lr, betas, eps), None
    elif optimizer == "muon":
        adam, muon = StackedAdam([model.out], lr, betas, eps), StackedMuon(lr)
    else:
        raise ValueError(f"optimizer {optimizer!r}: 'adam' or 'muon'")
    history = {"step": [], "train_acc": [], "test_acc": [], "train_loss": [], "test_loss": []}
    n_train, n_test = train_mask.sum(1).clamp(min=1), test_mask.sum(1).clamp(min=1)
    bar = Progress(steps + 1, label, enabled=progress)
    for step in capped(bar, steps + 1, "train_full_batch"):
        logits = model(a, b)
        per_example = loss_fn(logits, labels)
        train_loss = (per_example * train_mask).sum(1) / n_train
        if step % eval_every == 0 or step == steps:
            with torch.no_grad():
                correct = (logits.argmax(-1) == labels).float()
                row = {"train_acc": (correct * train_mask).sum(1) / n_train,
                       "test_acc": (correct * test_mask).sum(1) / n_test,
                       "train_loss": train_loss, "test_loss": (per_example * test_mask).sum(1) / n_test}
                history["step"].append(step)
                for key, value in row.items():
                    history[key].append(value.detach().cpu())
                for key, value in (on_eval(step, model) if on_eval else {}).items():
                    history.setdefault(key, []).append(torch.as_tensor(value).detach().cpu())
            bar.set_loss(train_loss.detach().mean())
        if step == steps:
            break
        grads = torch.autograd.grad(train_loss.sum(), params)
        if decay == "coupled":
            grads = [g + _view(wd, p) * p.detach() for g, p in zip(grads, params)]
        with torch.no_grad():
            if decay == "decoupled":  # before the step, as torch's AdamW does
                for p in params:
                    p.mul_(1 - _view(lr * wd, p))
            if muon is None:
                adam.step(grads)
            else:
                adam.step(grads[2:])
                step_left, step_right = muon.update(torch.cat(grads[:2], 1)).split(model.left.shape[1], 1)
                model.left.sub_(step_left)
                model.right.sub_(step_right)
    return {key: torch.stack(value) if key != "step" else torch.tensor(value) for key, value in history.items()}


def first_step_reaching(steps, values, threshold):
    """Per member: the first recorded step at which values (T, members) >= threshold; nan if never."""
    reached = values >= threshold
    first = reached.float().argmax(0)
    out = steps[first].to(torch.float64)
    out[~reached.any(0)] = float("nan")
    return out
