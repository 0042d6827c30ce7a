"""A negation circuit read from the weights alone (section 5.1, Fig 8, App N, O).

1. Weights only: for every live output-SAE latent f (active on more than `min_active` tokens: the only use of
   data in the selection), Q_f in the input-SAE basis (D^T Q_f D, symmetrized) and its spectrum. One large
   positive and one large negative eigenvalue is the signature of an AND of two input features
   (a b = ((a + b)^2 - (a - b)^2) / 4); its strength is score = min(lambda_max, -lambda_min) / (third largest
   |lambda|). The signature alone is common (in a small model many latents are conjunctions of token features),
   so the search is anchored at the readout the generator planted: the latents whose decoder direction moves the
   logit difference (positive - negative reactions) most, through the unembedding and the later attention layers'
   OV circuits (language_features.readout_direction), are the `candidates`; the selected latent is the
   candidate with the strongest AND signature, and the runner-up is the next one. The pure-signature choice
   over all live latents is reported too. As the paper does, the outliers are compared with the spectrum of a
   random symmetric m x m matrix with the same entry std s, inside [-2 s sqrt(m), 2 s sqrt(m)] (Wigner).
2. Names from data: every latent is named by where its activation mass falls among the sentiment events the
   story generator planted (language.annotate_events): 'negated' / 'affirmed' by the event's negation,
   'positive' / 'negative' by its polarity; a latent specific to both is an AND ('negated positive').
3. The selected latent's top interactions (Fig 8A: the top 15) are split into self-interactions and
   negation x sentiment cross-interactions, and its top activations are listed with their contexts.
"""
import numpy as np
import torch

from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import start_run, write_metrics
from shared.train.language_model import windows_at

from .language import (
    annotate_events,
    eval_activations,
    eval_positions,
    eval_starts,
    load_analysed,
    reaction_accuracy,
    reaction_ids,
)
from .language_features import active_tokens, feature_interactions, readout_direction, studied_latents

SPECIFIC = 0.8  # a latent is specific to a side when >= 80% of its (relevant) activation mass is on it


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


def contexts(words, scores, n, width=6):
    top = torch.topk(scores, n).indices.tolist()
    return [" ".join(words[max(0, i - width) : i]) + f" [{words[i]}]  ({scores[i].item():.2f})" for i in top]


def main():
    job = start_run("lm", "sae_in", "sae_out", "data", "metrics", "arrays")
    args = job.args
    p = args.params
    device = job.device
    run = load_analysed(args, device)
    lm, lm_meta, sae_in, sae_out, val_tokens = run.lm, run.lm_meta, run.sae_in, run.sae_out, run.val_tokens
    layer, a = p["sae"]["layer"], p["analysis"]

    # 1. weights only
    decoder = sae_in.decoder.double()
    m = decoder.shape[1]
    x, y, _ = eval_activations(lm, val_tokens, a["eval_windows"], layer)
    pre, active = active_tokens(sae_out, y)
    live = studied_latents(pre, active, a["min_active"])
    spectra, edges = [], []  # the matrices are not kept: 2,048 of 2,048 x 2,048 in the full tier
    for _, q in feature_interactions(lm, layer, sae_out, live):
        q_lat = analysis.in_basis(q, decoder)
        _, cross = analysis.self_and_cross(q_lat)
        vals = torch.linalg.eigvalsh(q_lat)
        spectra.append(vals)
        edges.append(2 * cross.std().item() * m ** 0.5)
    spectra, edges = torch.stack(spectra), torch.tensor(edges, dtype=torch.float64, device=device)
    third = spectra.abs().sort(dim=-1, descending=True).values[:, 2]
    score = torch.minimum(spectra[:, -1], -spectra[:, 0]) / third
    ids = reaction_ids(run.tokenizer)
    logit_diff = torch.zeros(run.tokenizer.vocab_size, dtype=torch.float64, device=device)
    logit_diff[ids["reaction_positive"]] = 1 / len(ids["reaction_positive"])
    logit_diff[ids["reaction_negative"]] = -1 / len(ids["reaction_negative"])
    effect = (sae_out.decoder.double().T @ readout_direction(lm, layer, logit_diff))[live]  # per live latent
    candidates = effect.abs().argsort(descending=True)[: a["candidates"]]
    best_row, second_row = candidates[score[candidates].argsort(descending=True)[:2]].tolist()
    best, second = live[best_row], live[second_row]
    signature_only = live[int(score.argmax())]

    # 2. names from data
    words = [run.tokenizer.decode([t]) for t in val_tokens.tolist()]
    starts = eval_starts(val_tokens, a["eval_windows"], lm.n_ctx)
    annotation = annotate_events(words)
    negated, polarity, in_event = (eval_positions(t, starts, lm.n_ctx).to(device) for t in annotation)
    windows = windows_at(val_tokens, starts, lm.n_ctx).to(device)
    negated_w = windows_at(annotation[0], starts, lm.n_ctx)[:, 1:].to(device)
    reaction = {"clean": reaction_accuracy(lm, windows, run.tokenizer, negated_w)}
    for i in range(len(lm.blocks)):
        reaction[f"without_mlp{i}"] = reaction_accuracy(lm, windows, run.tokenizer, negated_w, ablate_mlp=i)
    words = [words[i] for i in eval_positions(torch.arange(len(words)), starts, lm.n_ctx).tolist()]
    z_in = sae_in.double().encode(x)
    in_names = name_latents(z_in, negated, polarity, in_event)
    z_out = sae_out.double().encode(y)
    out_names = name_latents(z_out, negated, polarity, in_event)

    # 3. the selected latent
    q_lat = analysis.in_basis(next(feature_interactions(lm, layer, sae_out, [best]))[1], decoder)
    top = analysis.top_interactions(q_lat, a["top_interactions"])
    involved = sorted({i for a_, b_, _ in top for i in (a_, b_)})
    selfs = q_lat.diagonal()[involved].abs()
    cross_ns = [abs(v) for i, j, v in top if i != j and {kind(in_names[i]), kind(in_names[j])} == {"negation", "sentiment"}]
    _, all_cross = analysis.self_and_cross(q_lat)
    mean_cross_ns = float(np.mean(cross_ns)) if cross_ns else 0.0
    z_best = z_out[:, best]
    cells = {(n_, p_): z_best[in_event & (negated == n_) & (polarity == p_)].sum().item()
             for n_ in (0, 1) for p_ in (-1, 0, 1)}
    total = z_best.sum().item() or 1.0
    best_cell = max(((n_, p_) for n_, p_ in cells if n_ == 1 and p_ != 0), key=lambda c: cells[c])
    dec = sae_out.decoder.double()
    cosine = (dec[:, best] @ dec[:, second] / (dec[:, best].norm() * dec[:, second].norm())).item()

    metrics = {
        "selected_latent": best, "selected_name": out_names[best], "second_latent": second,
        "second_name": out_names[second], "selected_readout_effect": effect[best_row].item(),
        "second_readout_effect": effect[second_row].item(),
        "signature_only_latent": signature_only, "signature_only_name": out_names[signature_only],
        "selected_score": score[best_row].item(),
        "selected_lambda_max_over_edge": (spectra[best_row, -1] / edges[best_row]).item(),
        "selected_lambda_min_over_edge": (-spectra[best_row, 0] / edges[best_row]).item(),
        "latents_beyond_edge_both_signs": int((torch.minimum(spectra[:, -1], -spectra[:, 0]) > edges).sum()),
        "n_live_latents": len(live),
        "selected_negated_mass": sum(v for (n_, _), v in cells.items() if n_ == 1) / total,
        "selected_and_purity": cells[best_cell] / total,
        "selected_and_cell": f"negated {'positive' if best_cell[1] == 1 else 'negative'}",
        "top_cross_negation_sentiment": len(cross_ns),
        "top_interactions": len(top),
        "cross_to_self_ratio": mean_cross_ns / selfs.mean().item(),
        "cross_to_typical_ratio": mean_cross_ns / all_cross.std().item(),
        "decoder_cosine_top2": cosine,
        "reaction_accuracy": {k: v[0] for k, v in reaction.items()},
        "reaction_accuracy_negated": {k: v[1] for k, v in reaction.items()},
        "input_names": {n: in_names.count(n) for n in sorted(set(in_names))},
        "output_names": {n: out_names.count(n) for n in sorted(set(out_names))},
    }
    info = {"layer": layer, "device": lm_meta["device"],
            "top_interactions": [f"{i} ({in_names[i]}) x {j} ({in_names[j]}): {v:+.4f}" for i, j, v in top],
            "selected_top_activations": contexts(words, z_best, 8),
            "second_top_activations": contexts(words, z_out[:, second], 4),
            "signature_only_top_activations": contexts(words, z_out[:, signature_only], 4)}
    for i in involved[:6]:
        info[f"input_{i}_{in_names[i]}"] = contexts(words, z_in[:, i], 3)
    arrays = {
        "spectrum": spectra[best_row].cpu().numpy(), "edge": np.array(edges[best_row].item()),
        "score": score.cpu().numpy(),
        "submatrix": q_lat[involved][:, involved].cpu().numpy(), "labels": np.array([f"{i} {in_names[i]}" for i in involved]),
        "examples": np.array(info["selected_top_activations"]),
        "title": np.array(f"latent {best} ({out_names[best]})"),
    }
    write_metrics(args.metrics, metrics, lm_meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print(metrics, *info["top_interactions"], *info["selected_top_activations"], sep="\n")


if __name__ == "__main__":
    main()
