"""Per-neuron statistics of feature learning in a single- or multi-index model: how much of each neuron's weight
vector lies in the signal subspace, and which feature direction it points to.

    stats = feature_projection(W, basis, features)
        W         (..., width, d) first-layer weights (any leading axes: runs, time)
        basis     (s, d) orthonormal rows spanning the signal subspace (XOR on x_1 x_2: e_1, e_2)
        features  (f, d) unit feature directions (XOR: +-(e_1 +- e_2) / sqrt 2)
    -> signal: ||P w||, orthogonal: ||w - P w||, ratio: signal / orthogonal,
       cos: max_j <w, f_j> / ||w|| (the whole vector), nearest: that j,
       plane_cos: max_j <P w, f_j> / ||P w|| (the direction within the subspace only)
"""
import torch


def xor_features(d, support=(0, 1), dtype=torch.float32):
    """The signal basis (e_i, e_j) and the four feature directions +-(e_i +- e_j) / sqrt 2 of y = -x_i x_j."""
    basis = torch.zeros(2, d, dtype=dtype)
    basis[0, support[0]] = basis[1, support[1]] = 1
    signs = torch.tensor([[1, 1], [-1, -1], [1, -1], [-1, 1]], dtype=dtype) / 2 ** 0.5
    return basis, signs @ basis


def feature_projection(W, basis, features, eps=1e-30):
    coords = W @ basis.T                       # (..., width, s)
    signal = coords.norm(dim=-1)
    orthogonal = (W - coords @ basis).norm(dim=-1)  # not sqrt(||w||^2 - ||P w||^2): it cancels near alignment
    along = W @ features.T                      # (..., width, f)
    best, nearest = along.max(-1)
    plane = (coords @ (features @ basis.T).T).max(-1).values
    return {"signal": signal, "orthogonal": orthogonal, "ratio": signal / orthogonal.clamp(min=eps),
            "cos": best / W.norm(dim=-1).clamp(min=eps), "nearest": nearest,
            "plane_cos": plane / signal.clamp(min=eps)}
