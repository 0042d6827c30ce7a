"""Output features are low-rank in the MLP's weights (section 5.2, Fig 9; identities of section 3.1).

For every output-SAE latent active on more than `min_active` evaluation tokens (and not constant there): eigendecompose its interaction
matrix Q_f in the MLP-input space, and correlate the top-k approximation sum_{i<=k} lambda_i (v_i . x)^2 with the
latent's activation over the tokens where it is active (Pearson, as the paper). With all eigenvectors kept the
approximation is exact up to a constant, so the correlation must be 1.0. The SAE-basis identity: feeding the input
SAE's reconstruction x_hat = D z + b through the MLP, e_f . mlp(x_hat) = [z, 1]^T (D'^T Q_f D') [z, 1], D' = [D, b].
"""
import numpy as np
import torch

from shared.io.smoke import capped
from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import start_run, write_metrics
from shared.stats import rel_err

from .common import eval_activations, load_analysed
from .features import active_tokens, feature_interactions, studied_latents


def main():
    job = start_run("lm", "sae_in", "sae_out", "data", "metrics", "arrays")
    args = job.args
    p = args.params  # the config's language section
    device = job.device
    run = load_analysed(args, device)
    lm, lm_meta, sae_in, sae_out, val_tokens = run.lm, run.lm_meta, run.sae_in, run.sae_out, run.val_tokens
    layer, a = p["sae"]["layer"], p["analysis"]
    x, y, _ = eval_activations(lm, val_tokens, a["eval_windows"], layer)
    pre, active = active_tokens(sae_out, y)
    counts = active.sum(0)
    studied = studied_latents(pre, active, a["min_active"])
    d = x.shape[1]
    ks = [k for k in a["ks"] if k <= d] + [d]

    # The SAE-basis identity on reconstructed inputs, for the studied latents.
    mlp = lm.blocks[layer].mlp.double()
    sample = x[: a["identity_tokens"]]  # the basis change costs tokens x latents^2 per latent: a sample checks it
    z_in = sae_in.double().encode(sample)
    x_hat = sae_in.double().decode(z_in)
    lifted = torch.cat([sae_in.decoder.double(), sae_in.b_dec.double()[:, None]], dim=1)  # D' = [D, b]
    z1 = analysis.append_one(z_in)
    exact_out = mlp(x_hat) @ sae_out.encoder.double().T  # e_f . mlp(x_hat), all latents

    corrs, identity_err, offset_err = [], 0.0, 0.0
    # A d x d eigendecomposition and a fit per studied latent (thousands at the full tier): capped in a smoke run.
    sampled = [studied[i] for i in capped(range(len(studied)), len(studied), "studied_latents")]
    for i, (f, q) in enumerate(feature_interactions(lm, layer, sae_out, sampled)):
        if i < a["identity_latents"]:
            via_basis = ((z1 @ analysis.in_basis(q, lifted)) * z1).sum(-1)
            identity_err = max(identity_err, rel_err(via_basis, exact_out[:, f], norm="l2"))
        on = active[:, f]
        vals, vecs = analysis.eigendecompose(q)
        const = (sae_out.encoder.double()[f] @ sae_out.b_dec.double()).item()
        full = analysis.eigen_contributions(vals, vecs, x[on]).sum(-1) - const
        offset_err = max(offset_err, rel_err(full, pre[on, f], norm="l2"))
        corrs.append(analysis.low_rank_correlations(vals, vecs, x[on], pre[on, f], ks))
    corrs = np.array(corrs)  # (features, ks)
    at = {k: corrs[:, i] for i, k in enumerate(ks)}
    mean_curve = corrs.mean(0)
    metrics = {
        "n_latents": len(counts), "n_studied": len(studied), "min_active": a["min_active"],
        "eval_tokens": len(x), "d_model": d,
        "sae_basis_identity_rel_err": identity_err,
        "full_rank_offset_rel_err": offset_err,
        "corr_full_rank_min": float(at[d].min()),
        "mean_corr_k1": float(at[1].mean()), "mean_corr_k2": float(at[2].mean()),
        "frac_above_075_k2": float((at[2] > 0.75).mean()),
        "mean_corr_by_k": {str(k): float(v) for k, v in zip(ks, mean_curve)},
        "mean_corr_nondecreasing": bool(np.all(np.diff(mean_curve) >= -1e-9)),
    }
    arrays = {"ks": np.array(ks), "corrs": corrs, "frequency": counts[sampled].cpu().numpy() / len(x)}
    info = {"lm_seed": lm_meta["runs"][0]["seed"], "sae_steps": run.sae_meta["steps"], "layer": layer,
            "device": lm_meta["device"]}
    write_metrics(args.metrics, metrics, lm_meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print({k: v for k, v in metrics.items() if k != "mean_corr_by_k"})


if __name__ == "__main__":
    main()
