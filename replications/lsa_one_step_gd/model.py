"""The model of lsa_one_step_gd: one layer of linear self-attention (shared.nn.linear_attention), read out at the
query's label slot. With W^{PV} = P and W^{KQ} = Q^T (column notation of the paper), its prediction is

    y_hat = x_q^T Gamma g + (1/n) sum_j (u^T x_j)(x_q^T B^T x_j) + (a/n) sum_j y_j^2 c^T x_q   (+ the query's own
            term (1/n)(u^T x_q)(x_q^T B^T x_q) when the query is among the keys),

g = (1/n) sum_j y_j x_j, Gamma = a B^T + c u^T (shared.nn.linear_attention.effective_preconditioner).
"""
import torch

from shared.nn.linear_attention import LinearTransformer, effective_preconditioner, preconditioned_gd_form


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
    return model.readout_sign * preconditioned_gd_form(model.layers[0], prompts)
