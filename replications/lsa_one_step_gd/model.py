"""The model of lsa_one_step_gd: one layer of linear self-attention (shared.nn.linear_attention), read out at the
query's label slot. With W^{PV} = P and W^{KQ} = Q^T (column notation of the paper), its prediction is

    y_hat = x_q^T Gamma g + (1/n) sum_j (u^T x_j)(x_q^T B^T x_j) + (a/n) sum_j y_j^2 c^T x_q   (+ the query's own
            term (1/n)(u^T x_q)(x_q^T B^T x_q) when the query is among the keys),

g = (1/n) sum_j y_j x_j, Gamma = a B^T + c u^T (shared.nn.linear_attention.effective_preconditioner).
"""
import torch

from shared.nn.linear_attention import LinearTransformer, effective_preconditioner


def build(spec):
    """A one-layer LSA from a run spec; the caller seeds torch first so the init is fixed by the seed."""
    return LinearTransformer(spec["d"], layers=1, heads=1, param=spec["param"], mask_query_key=spec["mask_query_key"],
                             init_std=spec["init_std"])


def preconditioner(model):
    """(Gamma in float64, relative nuisance sizes) of the model's one layer."""
    gamma, nuisance = effective_preconditioner(model.layers[0])
    return gamma.to(torch.float64), nuisance


def reference_prediction(model, prompts):
    """The prediction written out term by term from the layer's weights, in float64 (the identity's right side)."""
    layer = model.layers[0]
    p, q = (m[0].detach().to(torch.float64) for m in layer.matrices())
    d = layer.d
    a, u, b_t, c = p[d, d], p[d, :d], q[:d, :d], q[:d, d]
    gamma = a * b_t + torch.outer(c, u)
    x, y = prompts.x.to(torch.float64), prompts.y.to(torch.float64)
    xs, ys, xq = x[:, :-1], y[:, :-1], x[:, -1]
    n = xs.shape[1]
    g = torch.einsum("bn,bnd->bd", ys, xs) / n
    out = torch.einsum("bd,de,be->b", xq, gamma, g)
    out = out + torch.einsum("bn,bn->b", xs @ u, torch.einsum("bd,de,bne->bn", xq, b_t, xs)) / n
    out = out + a * (ys**2).sum(1) / n * (xq @ c)
    if not layer.mask_query_key:
        out = out + (xq @ u) * torch.einsum("bd,de,be->b", xq, b_t, xq) / n
    return model.readout_sign * out
