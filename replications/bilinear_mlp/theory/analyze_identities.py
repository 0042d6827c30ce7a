"""The bilinear-note identities (Sharkey 2023; Pearce et al. 2025 sections 2-3), checked in float64 on trained weights.

Each metric is a relative error over a batch of test inputs (shared.stats.rel_err: max|a - b| / max|b|, or the
Euclidean norms where norm="l2"), or a boolean.
"""
import torch

from shared.data.images import load_images
from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import rel_err


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args = run.args
    models, _, meta = load_models(args.checkpoint)
    x = load_images(args.data, layout="hwc_flat")["x_test"][:512].double()
    model = models["bilinear"].double()
    left, right, out = model.mixer.left, model.mixer.right, model.head.weight
    z = model.embed(x)
    with torch.no_grad():
        logits = model(x)
        b = analysis.bilinear_tensor(left, right, out)  # (classes, d, d), not symmetrized
        contraction = torch.einsum("cij,ni,nj->nc", b, z, z)
        antisym = 0.5 * (b - b.transpose(-1, -2))
        antisym_part = torch.einsum("cij,ni,nj->nc", antisym, z, z)
        vals, vecs = analysis.eigendecompose(analysis.symmetrize(b))
        eigen_sum = analysis.quadratic_form(vals, vecs, z)

        # Eckart-Young: keeping the k largest-|lambda| eigenpairs gives non-increasing error as k grows
        q = analysis.symmetrize(b)
        errors = []
        for k in range(0, vals.shape[-1] + 1, 8):
            kv, kvec = analysis.truncate(vals, vecs, k)
            approx = torch.einsum("ck,cki,ckj->cij", kv, kvec, kvec)
            errors.append((q - approx).norm().item())
        monotone = all(e2 <= e1 * (1 + 1e-12) + 1e-15 for e1, e2 in zip(errors, errors[1:]))

        u, s, qk = analysis.hosvd(q)
        recon = torch.einsum("cr,r,rij->cij", u, s, qk)

        biased = models["bilinear_bias"].double()
        zb = biased.embed(x)
        aug = biased.interaction_matrices(torch.float64)  # (classes, d+1, d+1) on z' = [z, 1]
        bias_form = torch.einsum("cij,ni,nj->nc", aug, analysis.append_one(zb), analysis.append_one(zb))

    metrics = {
        "contraction_rel_err": rel_err(contraction, logits),
        "antisymmetric_rel_contribution": (antisym_part.abs().max() / logits.abs().max()).item(),
        "antisymmetric_rel_norm": (antisym.norm() / b.norm()).item(),
        "eigen_sum_rel_err": rel_err(eigen_sum, logits),
        "truncation_error_monotone": monotone,
        "hosvd_rel_err": rel_err(recon, q, norm="l2"),
        "hosvd_symmetry_err": rel_err(qk.transpose(-1, -2), qk, norm="l2"),
        "bias_augmentation_rel_err": rel_err(bias_form, biased(x)),
    }
    write_metrics(args.metrics, metrics, meta, info={"dtype": "float64", "inputs": len(x)},
                  arrays={"truncation_errors": errors}, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
