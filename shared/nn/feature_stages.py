"""Statistics of the three stages of Li2 (Tian, 2025), from a two-layer network's hidden features F (n x K) on the
training pairs and the centred targets Y (n x C).

Stage I (lazy): with weight decay eta, the top layer's ridge optimum V* = (F^T F + eta I)^-1 F^T Y leaves the
    residual Y - F V* = eta (F F^T + eta I)^-1 Y, and the signal sent back to the hidden layer is
    G_F = (Y - F V*) V*^T. If K >= n and eta = 0 then F V* = Y exactly and G_F = 0: memorisation, no feature
    learning. `backprop_signal` computes G_F and its norm relative to ||Y||.
Stage II (independent): each unit climbs an energy whose maxima are the group's irreducible features
    (measured by shared.nn.group_analysis.unit_alignment).
Stage III (interactive): units interact through B = (F~^T F~ + eta I)^-1 with F~ the sample-centred features;
    similar features get negative B_jl (repulsion). `repulsion_agreement` scores the sign rule on the most similar
    pairs. `gram_distance` measures how far F F^T is from a I + b 11^T (the structure of ideal features).
Everything is computed in float64.
"""
import torch


def _float64(x):
    return torch.as_tensor(x).detach().to(torch.float64)


def ridge_top_layer(features, targets, eta):
    """V* = (F^T F + eta I)^-1 F^T Y via the SVD of F (stable at eta = 0: the minimum-norm least-squares solution)."""
    f, y = _float64(features), _float64(targets)
    u, s, vh = torch.linalg.svd(f, full_matrices=False)
    keep = s > s.max() * 1e-12 if eta == 0 else torch.ones_like(s, dtype=torch.bool)
    u, s, vh = u[:, keep], s[keep], vh[keep]
    return vh.T @ torch.diag(s / (s * s + eta)) @ (u.T @ y)


def backprop_signal(features, targets, eta):
    """G_F = (Y - F V*) V*^T at the ridge-optimal top layer, and ||G_F|| / ||Y||."""
    f, y = _float64(features), _float64(targets)
    v = ridge_top_layer(f, y, eta)
    g = (y - f @ v) @ v.T
    return g, (g.norm() / y.norm()).item()


def feature_interaction(features, eta):
    """B = (F~^T F~ + eta I)^-1, F~ = F minus its mean over samples; a pseudo-inverse when eta = 0."""
    f = _float64(features)
    f = f - f.mean(0, keepdim=True)
    gram = f.T @ f
    if eta == 0:
        return torch.linalg.pinv(gram, hermitian=True)
    return torch.linalg.inv(gram + eta * torch.eye(len(gram), dtype=gram.dtype))


def repulsion_agreement(features, eta, top=100):
    """Among the `top` most similar unit pairs (cosine of sample-centred features, off-diagonal), the fraction with
    sign(B_jl) = -sign(similarity_jl) (Li2 Theorem 6 as the dossier states it)."""
    f = _float64(features)
    f = f - f.mean(0, keepdim=True)
    normed = f / f.norm(dim=0, keepdim=True).clamp(min=1e-300)
    similarity = normed.T @ normed
    b = feature_interaction(features, eta)
    j, l = torch.triu_indices(len(similarity), len(similarity), offset=1)
    sim, coupling = similarity[j, l], b[j, l]
    order = sim.abs().argsort(descending=True)[:top]
    return (torch.sign(coupling[order]) == -torch.sign(sim[order])).double().mean().item()


def gram_distance(features):
    """min over a, b of ||F F^T - (a I + b 11^T)|| / ||F F^T||: 0 when the samples' features are equicorrelated."""
    f = _float64(features)
    gram = f @ f.T
    n = len(gram)
    diagonal, total = gram.diagonal().sum(), gram.sum()
    # least squares in (a, b) for the basis {I, 11^T}: <I,I> = n, <I,11^T> = n, <11^T,11^T> = n^2
    system = torch.tensor([[n, n], [n, n * n]], dtype=torch.float64)
    a, b = torch.linalg.solve(system, torch.stack([diagonal, total]))
    fit = a * torch.eye(n, dtype=torch.float64) + b
    return ((gram - fit).norm() / gram.norm()).item()
