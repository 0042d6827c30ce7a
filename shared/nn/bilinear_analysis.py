"""Weight-based analysis of bilinear layers (Sharkey 2023; Pearce et al. 2025, sections 2-3).

Notation: z in R^d is the layer input, W (left) and V (right) are (h, d), the output map U is (o, h).
    B[o, i, j] = sum_h U[o, h] W[h, i] V[h, j]         so that   U (Wz * Vz) = z^T B[o] z.
Only the symmetric part of each B[o] contributes (z^T A z = 0 for antisymmetric A), so every interaction
matrix returned here is symmetrized. All functions work in any dtype; tests use float64.
"""
import torch

from shared.stats import pearson


def symmetrize(m):
    return 0.5 * (m + m.transpose(-1, -2))


def bilinear_tensor(left, right, out=None, symmetric=False):
    """B with the output map folded in: (o, d, d); without `out`, the per-hidden-unit tensor (h, d, d)."""
    if out is None:
        b = torch.einsum("hi,hj->hij", left, right)
    else:
        b = torch.einsum("oh,hi,hj->oij", out, left, right)
    return symmetrize(b) if symmetric else b


def interaction_matrix(left, right, out, direction):
    """Q = sum_o u_o B[o] for an output direction u (o,), symmetrized: (d, d). Avoids building B."""
    coeff = direction @ out  # (h,)
    return symmetrize(left.T @ (coeff[:, None] * right))


def interaction_matrices(left, right, out):
    """One symmetric interaction matrix per output row of `out`: (o, d, d)."""
    return symmetrize(torch.einsum("oh,hi,hj->oij", out, left, right))


def eigendecompose(q, order="magnitude"):
    """Batched eigendecomposition of symmetric matrices (..., d, d).

    Returns (vals (..., d), vecs (..., d, d)) with vecs[..., k, :] the k-th eigenvector, ordered by
    descending |lambda| (order='magnitude') or descending lambda (order='signed': most positive first).
    """
    vals, vecs = torch.linalg.eigh(symmetrize(q))
    return reorder(vals, vecs.transpose(-1, -2), order)


def reorder(vals, vecs, order):
    """Re-sort eigenpairs (vals (..., k), vecs (..., k, n), any vector length n) into another `order`, so one
    decomposition serves both orderings."""
    if order not in ("magnitude", "signed"):
        raise ValueError(f"order must be 'magnitude' or 'signed', got {order!r}")
    idx = (vals.abs() if order == "magnitude" else vals).argsort(dim=-1, descending=True)
    return vals.gather(-1, idx), vecs.gather(-2, idx[..., None].expand(*idx.shape, vecs.shape[-1]))


def quadratic_form(vals, vecs, z):
    """sum_k vals[k] (vecs[k] . z)^2 for a batch z (n, d) and per-output eigenpairs (o, k), (o, k, d): (n, o)."""
    return torch.einsum("ok,nok->no", vals, torch.einsum("okd,nd->nok", vecs, z) ** 2)


def project_to_input(vecs, embed):
    """Carry embedding-space eigenvectors back to the input: v~ = E^T v, so (v . E x) = (v~ . x).

    The projected vectors are what the paper draws; they are not orthonormal and are not eigenvectors of E^T Q E.
    """
    return vecs @ embed


def truncate(vals, vecs, k):
    """Keep the top-k eigenpairs of each output (vals/vecs must be ordered by magnitude)."""
    return vals[..., :k], vecs[..., :k, :]


def hosvd(b):
    """SVD of B reshaped to (o, d*d): b = sum_k s_k u_k (x) Q_k, each Q_k a (symmetric, for symmetric B) d x d matrix.

    Returns (u (o, r), s (r,), q (r, d, d)) with r = min(o, d*d).
    """
    o, d, _ = b.shape
    u, s, vh = torch.linalg.svd(b.reshape(o, d * d), full_matrices=False)
    return u, s, vh.reshape(-1, d, d)


def effective_rank(a, dim=-1):
    """(||a||_1 / ||a||_2)^2: the 'continuous L0' of App E; equals n for n equal entries, 1 for one non-zero."""
    return (a.abs().sum(dim) / a.norm(dim=dim)) ** 2


def augment_bias(weight, bias):
    """[W, b] acting on x' = [x, 1]: W' x' = W x + b. With both halves augmented, a biased bilinear layer is
    the bias-free one on x', so every identity above applies (the constant coordinate carries the linear terms)."""
    if bias is None:
        bias = torch.zeros(weight.shape[0], dtype=weight.dtype, device=weight.device)
    return torch.cat([weight, bias[:, None]], dim=1)


def layer_weights(layer, dtype=torch.float64):
    """(left, right) of a shared.nn.bilinear.Bilinear in `dtype`, bias-augmented (acting on [z, 1]) when it has biases."""
    left, right = layer.left.to(dtype), layer.right.to(dtype)
    if layer.left_bias is not None:
        left = augment_bias(left, layer.left_bias.to(dtype))
        right = augment_bias(right, layer.right_bias.to(dtype))
    return left, right


def append_one(x):
    return torch.cat([x, torch.ones(*x.shape[:-1], 1, dtype=x.dtype, device=x.device)], dim=-1)


def top_eigenvector_similarity(vecs_a, vecs_b):
    """|cos| between eigenvectors of the same rank in two models (sign is arbitrary): (..., k)."""
    a = vecs_a / vecs_a.norm(dim=-1, keepdim=True)
    b = vecs_b / vecs_b.norm(dim=-1, keepdim=True)
    return (a * b).sum(-1).abs()


# ---------------------------------------------------------------- language models and SAEs (section 5)
def in_basis(q, basis):
    """An interaction matrix (d, d) expressed in a feature basis (d, m), e.g. an input SAE's decoder columns
    (with b_dec appended as a column when the SAE's offset must be carried): basis^T Q basis, (m, m)."""
    return symmetrize(basis.T @ q @ basis)


def eigen_contributions(vals, vecs, x):
    """lambda_i (v_i . x)^2 for each eigenpair of one matrix (vals (k,), vecs (k, d)) and each x (n, d): (n, k)."""
    return vals * (x @ vecs.T) ** 2


def low_rank_correlations(vals, vecs, x, y, ks):
    """Pearson r between y (n,) and its top-k eigen approximation sum_{i<=k} lambda_i (v_i . x)^2, for each k in
    `ks` (eigenpairs ordered by magnitude): the paper's measure of how low-rank an output feature is (section 5.2).
    A top-k approximation that is constant over the tokens explains none of y's variance: r = 0 (y must vary)."""
    if not (y - y.mean()).abs().max() > 0:
        raise ValueError("y is constant: a correlation with it is undefined")
    partial = eigen_contributions(vals, vecs, x).cumsum(-1)
    rs = [pearson(partial[:, min(k, partial.shape[1]) - 1], y) for k in ks]
    return [0.0 if r != r else r for r in rs]


def self_and_cross(q):
    """Self-interactions (the diagonal) and cross-interactions (each unordered pair once) of a symmetric matrix."""
    rows, cols = torch.triu_indices(q.shape[-1], q.shape[-1], 1, device=q.device)
    return q.diagonal(dim1=-2, dim2=-1), q[..., rows, cols]


def top_interactions(q, n):
    """The n largest |Q_ab| entries (a <= b) of a symmetric matrix: (a, b, value) triples, largest first."""
    rows, cols = torch.triu_indices(q.shape[-1], q.shape[-1], 0, device=q.device)
    values = q[rows, cols]
    order = values.abs().argsort(descending=True)[:n]
    return [(int(rows[i]), int(cols[i]), float(values[i])) for i in order]
