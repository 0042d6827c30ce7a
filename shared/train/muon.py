"""Muon (Keller Jordan, 2024): SGD momentum whose update is replaced by an approximately orthogonal matrix.

As the BAE code (tdooms/bae) uses it, minus its hard-coded cuda + bfloat16 and distributed bookkeeping: the
Newton-Schulz iteration runs on the parameter's device in float32 unless `ns_dtype` asks for something else.
"""
import torch

NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def newton_schulz(g, steps=5, dtype=None):
    """Approximately orthogonalise g, or each matrix of a stack (..., rows, cols): U S' V^T with S' roughly in
    [0.5, 1.5] rather than U V^T (g = U S V^T).

    The quintic's coefficients maximise the slope at zero, so few steps lift small singular values at the price of
    not converging to exactly 1. Dividing by the Frobenius norm puts the spectral norm at most 1 to start.
    """
    a, b, c = NS_COEFFICIENTS
    x = g.to(torch.float32 if dtype is None else dtype)
    tall = x.size(-2) > x.size(-1)
    if tall:  # iterate on the wide orientation, so x @ x.T is the smaller Gram matrix
        x = x.mT
    x = x / (x.norm(dim=(-2, -1), keepdim=True) + 1e-7)  # leading axes, if any, are a stack of matrices
    for _ in range(steps):
        A = x @ x.mT
        x = a * x + (b * A + c * A @ A) @ x
    return x.mT if tall else x


class Muon(torch.optim.Optimizer):
    """For 2-D parameters only: buf = momentum * buf + grad; update = NS(grad + momentum * buf) (nesterov) or NS(buf);
    p -= lr * (sqrt(max(1, rows / cols)) * update + weight_decay * p)."""

    def __init__(self, params, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5, weight_decay=0.0, ns_dtype=None):
        defaults = dict(lr=lr, momentum=momentum, nesterov=nesterov, ns_steps=ns_steps, weight_decay=weight_decay,
                        ns_dtype=ns_dtype)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon optimises matrices; got a parameter of shape {tuple(p.shape)}")

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p.grad)
                buf = state["momentum_buffer"]
                buf.mul_(momentum).add_(p.grad)
                g = p.grad.add(buf, alpha=momentum) if group["nesterov"] else buf
                update = newton_schulz(g, group["ns_steps"], group["ns_dtype"])
                # entries of a tall update then get RMS 1/sqrt(cols), as a wide one's have
                update *= max(1, p.size(0) / p.size(1)) ** 0.5
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update.to(p.dtype), alpha=-lr)
        return loss
