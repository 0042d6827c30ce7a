"""The deep linear MLP of Hayou's proof, f(x) = V^T W_L ... W_1 W_0 x (widths n, no bias, no nonlinearity).

Every weight is a shared.nn.structured.Dense layer initialised through the shared parametrisation table
(shared.nn.parametrization): muP gives W_0 ~ N(0, 1/d), W_l ~ N(0, 1/n), V ~ N(0, 1/n^2); SP and NTP (written in SP
form) give V ~ N(0, 1/n). Only the hidden W_1..W_L are trained (W_0 and V frozen, as the dossier reads the paper);
their SGD learning-rate multiplier is the table's `lr_multiplier(scheme, n, n, "sgd")`: 1 (muP, SP), 1/n (NTP).
"""
import torch
from torch import nn

from shared.nn.parametrization import factor_table, initialize
from shared.nn.structured import Dense
from shared.io.smoke import capped


class DeepLinear(nn.Module):
    def __init__(self, d, n, depth, scheme):
        super().__init__()
        self.d, self.n, self.depth, self.scheme = d, n, depth, scheme
        self.w0 = Dense(d, n)
        self.hidden = nn.ModuleList(Dense(n, n) for _ in range(depth))
        self.v = Dense(n, 1)
        layers = {"w0": self.w0, **{f"w{i + 1}": h for i, h in enumerate(self.hidden)}, "v": self.v}
        self.rows = factor_table(layers, scheme, optimizer="sgd")

    def init(self, generator):
        initialize(self.rows, generator)
        for p in (self.w0.weight, self.v.weight):
            p.requires_grad_(False)  # frozen: W_0 and V are not trained
        return self

    def lr_mults(self):
        """SGD lr multiplier of each trained hidden layer, in order."""
        return [r["lr_mult"] for r in self.rows if r["name"].startswith("w") and r["name"] != "w0.weight"]

    def features(self, x):
        return self.w0(x)

    def forward(self, x, hidden=None):
        """f(x) (shape (m,)); `hidden` replaces W_1..W_L by the given matrices (a GD step without copying)."""
        h = self.w0(x)
        for i, layer in enumerate(self.hidden):
            h = h @ (layer.weight if hidden is None else hidden[i]).T
        return self.v(h).squeeze(-1)


def build(spec):
    """One model from a run spec {d, n, depth, scheme}; the caller initialises it (`.init(generator)`)."""
    return DeepLinear(spec["d"], spec["n"], spec["depth"], spec["scheme"]).double()


def hidden_grads(model, x, y):
    """Gradients of the loss (1/2m) sum (f(x_i) - y_i)^2 with respect to W_1..W_L at the current weights."""
    params = [layer.weight for layer in model.hidden]
    loss = 0.5 * ((model(x) - y) ** 2).mean()
    return [g.detach() for g in torch.autograd.grad(loss, params)]


def one_step_output(model, x, grads, eta):
    """f^(1)(x) after one full-batch GD step of size eta (times each layer's lr multiplier)."""
    with torch.no_grad():
        hidden = [layer.weight - eta * mult * g for layer, mult, g in zip(model.hidden, model.lr_mults(), grads)]
        return model(x, hidden)


def gd_losses(model, x, y, eta, steps):
    """[loss after t steps for t = 1..steps] of full-batch GD of size eta from the model's weights (left unchanged).
    A smoke run's capped loop skips steps: their entries stay NaN, so the list keeps its length."""
    hidden = [layer.weight.detach().clone().requires_grad_(True) for layer in model.hidden]
    mults, losses = model.lr_mults(), [float("nan")] * steps
    for t in capped(range(steps), steps, "gd_losses", count_flops=False):
        loss = 0.5 * ((model(x, hidden) - y) ** 2).mean()
        if t:
            losses[t - 1] = loss.item()
        grads = torch.autograd.grad(loss, hidden)
        with torch.no_grad():
            hidden = [(w - eta * m * g).requires_grad_(True) for w, m, g in zip(hidden, mults, grads)]
    with torch.no_grad():
        losses[steps - 1] = (0.5 * ((model(x, hidden) - y) ** 2).mean()).item()
    return losses
