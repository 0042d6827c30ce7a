"""A negation feature found the way the paper found it, then read through the weights (section 5.1, Fig 8, App N, O).

1. Which layer (a check, not a choice): zeroing each layer's MLP output, the reaction accuracy on negated events
   says which MLP computes the planted circuit; the analysed layer (config `sae.layer`) should be that one.
2. Activations (App O: the paper's features 1882 and 1179 are the ones that fire on negated sentiment): every
   output latent's activation mass is split over the sentiment events the story generator planted
   (language.annotate_events). For each polarity p, the live latent with the largest share of its mass on
   negated events of polarity p is that polarity's negation feature ('not good' for p = +1, 'not bad' for
   p = -1); the purer of the two is the selected feature, the other one its opposite. No weight enters here.
3. Weights (Fig 8, App N): the selected feature's interaction matrix in the input-SAE basis (D^T Q_f D,
   symmetrized): its spectrum (an AND of two inputs, a b = ((a + b)^2 - (a - b)^2) / 4, has one positive and one
   negative eigenvalue standing out from the rest; the paper also draws the edge 2 s sqrt(m) of a random symmetric
   matrix with the same entry std s), its top interactions split into self-interactions and negation x sentiment
   cross-interactions (input latents named from data as in step 2), and its decoder's cosine with the opposite
   feature's (the paper: -0.975).
"""
import numpy as np
import torch

from shared.io.smoke import capped
from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import start_run, write_metrics
from shared.train.language_model import windows_at

from .common import annotate_events, eval_activations, eval_positions, eval_starts, load_analysed, reaction_accuracy
from .features import active_tokens, feature_interactions, studied_latents

SPECIFIC = 0.8  # a latent is specific to a side when >= 80% of its (relevant) activation mass is on it
POLARITY = {1: "negated positive", -1: "negated negative"}


def name_latents(codes, negated, polarity, in_event):
    """A name per latent (columns of codes (n, m)) from its activation mass over the annotated tokens."""
    mass = codes.sum(0).clamp_min(1e-12)
    m_event = codes[in_event].sum(0)
    m_neg = codes[in_event & (negated == 1)].sum(0)
    m_pol = codes[polarity != 0].sum(0)
    m_pos = codes[polarity == 1].sum(0)
    names = []
    for j in range(codes.shape[1]):
        if codes[:, j].sum() == 0:
            names.append("dead")
            continue
        if m_event[j] < 0.5 * mass[j]:
            names.append("other")
            continue
        parts = []
        p_neg = m_neg[j] / m_event[j]
        parts += ["negated"] if p_neg >= SPECIFIC else ["affirmed"] if p_neg <= 1 - SPECIFIC else []
        if m_pol[j] >= 0.3 * mass[j]:
            p_pos = m_pos[j] / m_pol[j]
            parts += ["positive"] if p_pos >= SPECIFIC else ["negative"] if p_pos <= 1 - SPECIFIC else []
        names.append(" ".join(parts) or "event")
    return names


def kind(name):
    return "negation" if name == "negated" else "sentiment" if name in ("positive", "negative") else None


def negated_shares(codes, negated, polarity, in_event):
    """{p: share of each latent's activation mass on negated events of polarity p} (each (m,))."""
    mass = codes.sum(0).clamp_min(1e-12)
    return {p: codes[in_event & (negated == 1) & (polarity == p)].sum(0) / mass for p in POLARITY}


def contexts(words, scores, n, width=6):
    top = torch.topk(scores, n).indices.tolist()
    return [" ".join(words[max(0, i - width) : i]) + f" [{words[i]}]  ({scores[i].item():.2f})" for i in top]


def spectrum_summary(q_lat):
    """Eigenvalues (ascending), the random-matrix edge 2 s sqrt(m) (s: std of the cross-interactions), and how far
    the two extremes stand out: min(lambda_max, -lambda_min) / third largest |lambda| (> 1 only for a +/- pair)."""
    _, cross = analysis.self_and_cross(q_lat)
    vals = torch.linalg.eigvalsh(q_lat)
    edge = 2 * cross.std().item() * q_lat.shape[0] ** 0.5
    third = vals.abs().sort(descending=True).values[2]
    return vals, edge, (torch.minimum(vals[-1], -vals[0]) / third).item()


def main():
    job = start_run("lm", "sae_in", "sae_out", "data", "metrics", "arrays")
    args = job.args
    p = args.params
    device = job.device
    run = load_analysed(args, device)
    lm, lm_meta, sae_in, sae_out, val_tokens = run.lm, run.lm_meta, run.sae_in, run.sae_out, run.val_tokens
    layer, a = p["sae"]["layer"], p["analysis"]

    # 1. which MLP computes the planted reaction
    ids = val_tokens.tolist()
    vocab = {t: run.tokenizer.decode([t]) for t in set(ids)}  # decoded once per distinct token: the stream is millions
    words = [vocab[t] for t in ids]
    starts = eval_starts(val_tokens, a["eval_windows"], lm.n_ctx)
    annotation = annotate_events(words)
    windows = windows_at(val_tokens, starts, lm.n_ctx).to(device)
    negated_w = windows_at(annotation[0], starts, lm.n_ctx)[:, 1:].to(device)
    reaction = {"clean": reaction_accuracy(lm, windows, run.tokenizer, negated_w)}
    for i in range(len(lm.blocks)):
        reaction[f"without_mlp{i}"] = reaction_accuracy(lm, windows, run.tokenizer, negated_w, ablate_mlp=i)
    negated_acc = [reaction[f"without_mlp{i}"][1] for i in range(len(lm.blocks))]

    # 2. the negation features, from activations alone
    negated, polarity, in_event = (eval_positions(t, starts, lm.n_ctx).to(device) for t in annotation)
    words = [words[i] for i in eval_positions(torch.arange(len(words)), starts, lm.n_ctx).tolist()]
    x, y, _ = eval_activations(lm, val_tokens, a["eval_windows"], layer)
    pre, active = active_tokens(sae_out, y)
    live = studied_latents(pre, active, a["min_active"])
    z_out = sae_out.double().encode(y)
    shares = negated_shares(z_out, negated, polarity, in_event)
    pick = {q: live[int(shares[q][live].argmax())] for q in POLARITY}
    sel_pol = max(POLARITY, key=lambda q: shares[q][pick[q]].item())
    opp_pol = -sel_pol
    best = pick[sel_pol]
    opp_live = [f for f in live if f != best]
    opposite = opp_live[int(shares[opp_pol][opp_live].argmax())]
    cell = {q: in_event & (negated == 1) & (polarity == q) for q in POLARITY}

    # 3. its weights
    decoder = sae_in.decoder.double()
    z_in = sae_in.double().encode(x)
    in_names = name_latents(z_in, negated, polarity, in_event)
    out_names = name_latents(z_out, negated, polarity, in_event)
    q_lat = analysis.in_basis(next(feature_interactions(lm, layer, sae_out, [best]))[1], decoder)
    vals, edge, pair_over_third = spectrum_summary(q_lat)
    # One m x m eigendecomposition per live latent (m input latents: minutes each at the full tier's sizes on a CPU),
    # so a smoke run decomposes only its capped few.
    sampled = [live[i] for i in capped(range(len(live)), len(live), "live_spectra")]
    live_pair = np.array([spectrum_summary(analysis.in_basis(q, decoder))[2]
                          for _, q in feature_interactions(lm, layer, sae_out, sampled)])
    top = analysis.top_interactions(q_lat, a["top_interactions"])
    involved = sorted({i for a_, b_, _ in top for i in (a_, b_)})
    selfs = q_lat.diagonal()[involved].abs()
    cross_ns = [abs(v) for i, j, v in top if i != j and {kind(in_names[i]), kind(in_names[j])} == {"negation", "sentiment"}]
    _, all_cross = analysis.self_and_cross(q_lat)
    mean_cross_ns = float(np.mean(cross_ns)) if cross_ns else 0.0
    dec = sae_out.decoder.double()
    cosine = (dec[:, best] @ dec[:, opposite] / (dec[:, best].norm() * dec[:, opposite].norm())).item()

    metrics = {
        "analysed_layer": layer,
        "analysed_layer_most_causal": bool(int(np.argmin(negated_acc)) == layer),
        "reaction_accuracy": {k: v[0] for k, v in reaction.items()},
        "reaction_accuracy_negated": {k: v[1] for k, v in reaction.items()},
        "selected_latent": best, "selected_name": out_names[best], "selected_cell": POLARITY[sel_pol],
        "selected_and_purity": shares[sel_pol][best].item(),
        "selected_active_tokens": int(active[:, best].sum()),
        "selected_cell_coverage": (z_out[cell[sel_pol], best] > 0).float().mean().item(),
        "opposite_latent": opposite, "opposite_name": out_names[opposite], "opposite_cell": POLARITY[opp_pol],
        "opposite_and_purity": shares[opp_pol][opposite].item(),
        "opposite_active_tokens": int(active[:, opposite].sum()),
        "opposite_cell_coverage": (z_out[cell[opp_pol], opposite] > 0).float().mean().item(),
        "decoder_cosine_opposite": cosine,
        "selected_pair_over_third": pair_over_third,
        "live_pair_over_third": {"median": float(np.median(live_pair)), "p90": float(np.quantile(live_pair, 0.9)),
                                 "max": float(live_pair.max())},
        "selected_lambda_max_over_edge": vals[-1].item() / edge,
        "selected_lambda_min_over_edge": -vals[0].item() / edge,
        "selected_eigenvalues_beyond_edge": {"positive": int((vals > edge).sum()), "negative": int((vals < -edge).sum())},
        "n_live_latents": len(live),
        "top_cross_negation_sentiment": len(cross_ns),
        "top_interactions": len(top),
        "cross_to_self_ratio": mean_cross_ns / selfs.mean().item(),
        "cross_to_typical_ratio": mean_cross_ns / all_cross.std().item(),
        "input_names": {n: in_names.count(n) for n in sorted(set(in_names))},
        "output_names": {n: out_names.count(n) for n in sorted(set(out_names))},
    }
    info = {"layer": layer, "device": lm_meta["device"],
            "top_interactions": [f"{i} ({in_names[i]}) x {j} ({in_names[j]}): {v:+.4f}" for i, j, v in top],
            "selected_top_activations": contexts(words, z_out[:, best], 8),
            "opposite_top_activations": contexts(words, z_out[:, opposite], 4)}
    for i in involved[:6]:
        info[f"input_{i}_{in_names[i]}"] = contexts(words, z_in[:, i], 3)
    arrays = {
        "spectrum": vals.cpu().numpy(), "edge": np.array(edge), "live_pair_over_third": live_pair,
        "submatrix": q_lat[involved][:, involved].cpu().numpy(), "labels": np.array([f"{i} {in_names[i]}" for i in involved]),
        "examples": np.array(info["selected_top_activations"]),
        "title": np.array(f"latent {best} ({POLARITY[sel_pol]}: {shares[sel_pol][best].item():.0%} of its mass)"),
    }
    write_metrics(args.metrics, metrics, lm_meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print(metrics, *info["top_interactions"], *info["selected_top_activations"], sep="\n")


if __name__ == "__main__":
    main()
