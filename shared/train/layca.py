"""Layca, LAYer-level Controlled Amount of weight rotation (Carbonnelle & De Vleeschouwer 2019): any optimizer's
update of each kernel replaced by a rotation whose angle its learning rate alone sets.

As the official layca() (ispgroupucl/layer-rotation-tools), for each kernel p and the base optimizer's update s:
    s <- s - (<s, p> / ||p||^2) p           project onto the sphere's tangent space at p
    s <- s ||p|| / ||s||                    as long as p (0 if ||s|| is below eps)
    p <- p - rho s;  p <- p ||p_old|| / ||p||   so p turns by arctan(rho) and keeps its norm
Every other parameter (biases, normalisation gains and shifts) is returned unchanged, i.e. frozen at its initial
value while Layca is on: the official code does so, and this port matches it.

    opt = Layca(torch.optim.SGD(groups, lr=...), kernels=[p for _, p in layer_rotation.kernels(model)])
    # each parameter group's `lr` is its rho (a kernel per group gives per-layer rates: alpha_multipliers)
"""
import torch

EPS = 1e-7  # Keras' K.epsilon(), the official code's threshold for a zero step


def alpha_multipliers(n_layers, alpha):
    """The per-layer rate multipliers of the official get_learning_rate_multipliers, layers input -> output:
    alpha > 0 slows the first layers, by up to (1 - alpha)^5; alpha <= 0 slows the last, by up to (1 + alpha)^5."""
    if not -1 < alpha < 1:
        raise ValueError(f"alpha {alpha} must lie in (-1, 1)")
    last = max(n_layers - 1, 1)
    if alpha > 0:
        return [(1 - alpha) ** (5 * (n_layers - 1 - l) / last) for l in range(n_layers)]
    return [(1 + alpha) ** (5 * l / last) for l in range(n_layers)]


@torch.no_grad()
def layca_update(p, step, rate):
    """Turn kernel p in place by the Layca step of update `step` at rate `rate` (the formula above)."""
    norm = p.norm()
    step = step - (step * p).sum() / norm ** 2 * p
    if step.norm() <= EPS:
        return
    new = p - rate * step * (norm / step.norm())
    p.copy_(new * (norm / new.norm()))


class Layca:
    """A wrapper around a torch optimizer (which owns the parameter groups, their `lr` and the state): the base
    optimizer's step gives each kernel's update direction, Layca applies it as a rotation, the rest stays put.
    fit() (shared.train.loop) drives it as any optimizer: param_groups, zero_grad, step."""

    def __init__(self, base, kernels):
        self.base, self.param_groups = base, base.param_groups
        self.kernels = {id(p) for p in kernels}
        in_groups = {id(p) for g in self.param_groups for p in g["params"]}
        if not self.kernels <= in_groups:
            raise ValueError("Layca: every kernel must be a parameter of the base optimizer")

    def zero_grad(self, set_to_none=True):
        self.base.zero_grad(set_to_none=set_to_none)

    @torch.no_grad()
    def step(self):
        params = [p for g in self.param_groups for p in g["params"]]
        before = [p.clone() for p in params]
        rates = [g["lr"] for g in self.param_groups]
        for g in self.param_groups:  # the base steps at rate 1: Layca rescales the update anyway, and the
            g["lr"] = 1.0            # difference p_old - p_new keeps its digits
        self.base.step()
        for g, rate in zip(self.param_groups, rates):
            g["lr"] = rate
        by_id = {id(p): rate for g, rate in zip(self.param_groups, rates) for p in g["params"]}
        for p, old in zip(params, before):
            update = old - p
            p.copy_(old)
            if id(p) in self.kernels:
                layca_update(p, update, by_id[id(p)])
