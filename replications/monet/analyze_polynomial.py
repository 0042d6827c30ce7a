"""What the trained weights compute, exactly and read as interaction matrices (float64 throughout).

Degree (shared.nn.polynomial.degree_residuals: a Chebyshev least-squares fit along lines between test images):
the flat Mu-layer has degree 2 and not 1; a trained Poly-block without LayerNorm degree 4 and not 3; the whole
LayerNorm-free MONet at most 4^(blocks); the MONet without its product degree 1; the MONet with LayerNorm is not a
polynomial of that degree (the control that the fit can fail).
Weights (the suite's extension): the flat Mu-layer is a bilinear layer on z = [x, 1] (MuLayer.bilinear_weights), so
each class logit is z^T Q_c z with Q_c of rank <= 2 (l + 1); Q_c's eigenpairs (in that span; shared.nn.bilinear_analysis)
give the truncation curve: test accuracy keeping each class's top-k eigenpairs by |lambda|, against k eigenpairs at random.
The spatial shift is checked against a per-index reference; the official in-place shift is measured beside it.
"""
import statistics

import numpy as np
import torch

from shared.nn import bilinear_analysis as ba
from shared.nn.polynomial import degree_residuals, spatial_shift
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import rel_err

from .common import load_data


def lines(x, count, generator):
    """`count` (start, direction) pairs: x_a and x_b - x_a for random pairs of rows of x."""
    idx = torch.randperm(len(x), generator=generator)[: 2 * count].view(count, 2)
    return [(x[a], x[b] - x[a]) for a, b in idx.tolist()]


def worst(f, pairs, degree, nodes):
    """The largest residual over the lines of a degree-`degree` fit."""
    return max(degree_residuals(f, x0, v, [degree], nodes)[degree] for x0, v in pairs)


def reference_shift(x):
    """The shift written index by index: quarter q moves +1/-1 along H (q = 0, 1) or W (q = 2, 3), edges kept."""
    out = x.clone()
    n, h, w, c = x.shape
    q = c // 4
    for i in range(h):
        for j in range(w):
            out[:, i, j, :q] = x[:, max(i - 1, 0), j, :q]
            out[:, i, j, q:2 * q] = x[:, min(i + 1, h - 1), j, q:2 * q]
            out[:, i, j, 2 * q:3 * q] = x[:, i, max(j - 1, 0), 2 * q:3 * q]
            out[:, i, j, 3 * q:] = x[:, i, min(j + 1, w - 1), 3 * q:]
    return out


def official_shift(x):
    """The official code's shift (S^2-MLP's spatial_shift1): overlapping in-place slice assignments."""
    x = x.clone()
    _, w, h, c = x.size()
    x[:, 1:, :, :c // 4] = x[:, :w - 1, :, :c // 4]
    x[:, :w - 1, :, c // 4:c // 2] = x[:, 1:, :, c // 4:c // 2]
    x[:, :, 1:, c // 2:c * 3 // 4] = x[:, :, :h - 1, c // 2:c * 3 // 4]
    x[:, :, :h - 1, 3 * c // 4:] = x[:, :, 1:, 3 * c // 4:]
    return x


def block_input(model, x):
    """The token grid the first Poly-block of a MONet reads."""
    return model.stem(x.view(-1, *model.image_shape)).permute(0, 2, 3, 1)


def interaction_matrices(layer):
    """Q (classes, d+1, d+1) with logits_c = z^T Q_c z on z = [x, 1]; the output bias c0 sits in Q_c[d, d]; and an
    orthonormal basis (classes, d+1, 2 (l+1)) of a space holding each Q_c's range. With right = F G (F = [alpha B,
    right's last column], G = [[D, 0], [0, 1]]), Q_c = sym(left^T diag(C_c) F G) lies in span(left^T diag(C_c) F, G^T)
    (the constant c0 too: e_d is a column of G^T)."""
    left, right = layer.bilinear_weights()
    c = layer.out.weight.double()
    q = ba.interaction_matrices(left, right, c)
    q[:, -1, -1] += layer.out.bias.double()
    alpha = 1.0 if layer.alpha is None else layer.alpha.double()
    f = torch.cat([alpha * layer.right.u.double(), right[:, -1:]], dim=1)  # (m, l+1)
    g = torch.block_diag(layer.right.v.double(), torch.ones(1, 1, dtype=torch.float64))  # (l+1, d+1)
    spans = torch.cat([left.T @ (c[:, :, None] * f), g.T.expand(len(c), -1, -1)], dim=2)
    return q, torch.linalg.qr(spans).Q


def truncation(layer, z_id, z, y, ks, draws, generator):
    """Test accuracy from each class's top-k eigenpairs of Q_c (k in ks), and from k drawn at random among its
    2 (l + 1) (mean over `draws`); plus the quadratic-form identity's error on z_id, how far Q_c is from its
    projection on the 2 (l + 1)-dimensional span (the rank cap), and the eigenpairs. The eigenpairs are those of the
    projected matrix (exact when the cap holds): an eigh of (d+1)^2 per class would dominate the full tier."""
    q, basis = interaction_matrices(layer)
    identity = rel_err(torch.einsum("cij,ni,nj->nc", q, z_id, z_id), layer(z_id[:, :-1]))
    small = basis.transpose(1, 2) @ q @ basis
    cap_residual = rel_err(basis @ small @ basis.transpose(1, 2), q)
    vals, w = torch.linalg.eigh(ba.symmetrize(small))
    vals, vecs = ba.reorder(vals, (basis @ w).transpose(1, 2), "magnitude")
    cap = vals.shape[1]
    top, rand = {}, {}
    for k in ks:
        top[k] = (ba.quadratic_form(vals[:, :k], vecs[:, :k], z).argmax(-1) == y).double().mean().item()
        accs = []
        for _ in range(draws):
            pick = torch.stack([torch.randperm(cap, generator=generator)[:k] for _ in range(len(q))])
            v, u = vals.gather(1, pick), vecs.gather(1, pick[..., None].expand(-1, -1, vecs.shape[-1]))
            accs.append((ba.quadratic_form(v, u, z).argmax(-1) == y).double().mean().item())
        rand[k] = statistics.fmean(accs)
    return identity, cap_residual, top, rand, vals, vecs


def main():
    run = start_run("monet", "flat", "data", "metrics", "arrays")
    args, p = run.args, run.params
    data = load_data(args.data)
    x, y = data["x_test"].double(), data["y_test"]
    gen = run.generator(0, "analysis/lines")
    pairs = lines(x, p["degree_lines"], gen)
    nodes = p["degree_nodes"]
    m, skipped = {}, {}

    flat, flat_specs, _ = load_models(args.flat)
    mus = [(n, mdl.double()) for n, mdl in flat.items() if flat_specs[n]["kind"] == "mu"]
    m["mu_degree2_residual"] = max(worst(mdl, pairs, 2, nodes) for _, mdl in mus)
    m["mu_degree1_residual"] = min(worst(mdl, pairs, 1, nodes) for _, mdl in mus)

    monet, monet_specs, meta = load_models(args.monet)
    by_kind = {}
    for name, mdl in monet.items():
        by_kind.setdefault(monet_specs[name]["kind"], []).append(mdl.double())
    blocks = sum(monet_specs[next(iter(monet))]["depths"])
    total = 4 ** blocks
    if total < nodes // 2:
        m["nonorm_net_residual"] = max(worst(mdl, pairs, total, nodes) for mdl in by_kind["nonorm"])
        m["layernorm_net_residual"] = min(worst(mdl, pairs, total, nodes) for mdl in by_kind["mu"])
    else:
        why = f"degree 4^{blocks} = {total} needs more than {nodes} nodes per line"
        skipped.update(nonorm_net_residual=why, layernorm_net_residual=why)
    m["linear_net_residual"] = max(worst(mdl, pairs, 1, nodes) for mdl in by_kind["linear"])
    block_res = {4: [], 3: []}
    for mdl in by_kind["nonorm"]:
        grid = [(block_input(mdl, x0[None])[0], block_input(mdl, x0[None] + v[None])[0] - block_input(mdl, x0[None])[0])
                for x0, v in pairs]
        for k in block_res:
            block_res[k].append(worst(mdl.stages[0][0], grid, k, nodes))
    m["block_degree4_residual"], m["block_degree3_residual"] = max(block_res[4]), min(block_res[3])

    grid = torch.randn(2, 5, 6, 8, generator=gen, dtype=torch.float64)
    m["shift_max_err"] = float((spatial_shift(grid) - reference_shift(grid)).abs().max())
    m["official_shift_max_err"] = float((official_shift(grid) - reference_shift(grid)).abs().max())

    z = ba.append_one(x[: p["identity_inputs"]])
    za = ba.append_one(x)
    ks = sorted(set(p["truncation_ks"]) | {p["claim_k"]})
    errs, caps, tops, rands, acc_full, eig = [], [], [], [], [], None
    for name, layer in sorted(mus):
        identity, cap_residual, top, rand, vals, vecs = truncation(layer, z, za, y, ks, p["random_draws"], gen)
        errs.append(identity)
        caps.append(cap_residual)
        tops.append(top)
        rands.append(rand)
        acc_full.append((layer(x).argmax(-1) == y).double().mean().item())
        if eig is None:  # the first seed's top eigenvector per class, back in pixels (the constant coordinate off)
            eig = {"top_eigenvectors": vecs[:, 0, :-1].numpy(), "top_eigenvalues": vals[:, 0].numpy()}
    k = p["claim_k"]
    m["quadratic_form_rel_err"] = max(errs)
    m["rank_cap_residual"] = max(caps)
    m[f"truncation_gap_top{k}"] = statistics.fmean(a - t[k] for a, t in zip(acc_full, tops))
    m[f"truncation_gap_random{k}"] = statistics.fmean(a - r[k] for a, r in zip(acc_full, rands))
    for kk in ks:
        m[f"top{kk}_acc"] = statistics.fmean(t[kk] for t in tops)

    arrays = {"ks": np.array(ks), "full_acc": np.array(statistics.fmean(acc_full)),
              "top_acc": np.array([[t[kk] for kk in ks] for t in tops]),
              "random_acc": np.array([[r[kk] for kk in ks] for r in rands]),
              "image_shape": np.array(monet_specs[next(iter(monet))]["image_shape"]), **eig}
    info = {"lines": len(pairs), "nodes": nodes, "blocks": blocks, "rank_cap": 2 * (mus[0][1].rank + 1),
            "claim_k": k}
    write_metrics(args.metrics, m, meta, info=info, arrays=arrays, arrays_path=args.arrays, skipped=skipped)
    print(m)


if __name__ == "__main__":
    main()
