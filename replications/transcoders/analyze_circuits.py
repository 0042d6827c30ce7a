"""Circuits read from the weights against activation patching, in the language model, for the transcoders of the
two analysed layers a < b (dicts.layers) at one L1 coefficient (analysis.circuit_l1_index).

Attribution (section 3): for each source feature i of layer a's transcoder (spliced in place of the MLP) and
target feature j of layer b's, the direct-path attribution summed over tokens, averaged per token:
residual (s_dst z_i f_dec,i . f_enc,j) plus the OV path of every attention layer in between, norm scales and
attention patterns frozen (shared.nn.circuits.feature_attribution_total). Patching: the mean change of target j's
pre-activation when source i is zeroed at every token (norm scales and attention patterns recomputed). Agreement:
Spearman rank correlation over the source x target pairs. Controls measured here: the same attribution with the
weight products of random-init transcoders (a seed independent of the trained ones' init), and the residual path alone.

Identity (float64): on a few windows, every target feature's pre-activation equals the sum of its attributions
(upstream residual incl. de-embedding, transcoder features, output bias; each directly and through the OV circuits
of layer b's attention) plus the target's bias terms.
"""
import numpy as np
import torch

from shared.data.tokens import load_tokens
from shared.nn import circuits
from shared.io.smoke import capped
from shared.nn.transcoder import Transcoder
from shared.pipeline.run import start_run, write_metrics
from shared.stats import pearson, spearman
from shared.train.language_model import fixed_windows

from .common import load_checkpoint


def random_weights(spec, device):
    """A transcoder at a random initialisation independent of the trained one's (its init seed + 1): short runs
    leave a transcoder near its own init, which would then not be a control."""
    torch.manual_seed(spec["init_seed"] + 1)
    return Transcoder(spec["d_in"], spec["d_out"], spec["n_features"]).to(device).requires_grad_(False)


@torch.no_grad()
def target_pre(model, tokens, tc_src, a, tc_tgt, b, ablate=None):
    """(z of the source transcoder, pre-activations of the target's, streams) with layer a's MLP spliced."""
    with circuits.splice(model, {a: tc_src}, {a: ablate} if ablate is not None else None) as sp, \
            circuits.norm_inputs(model) as streams:
        model(tokens)
    h = streams[(b, "mlp")]
    return sp[a].z, tc_tgt.pre_activations(h * circuits.norm_scale(h)[..., None]), streams


@torch.no_grad()
def decomposition_error(model, tokens, tc_src, a, tc_tgt, b):
    """max |sum of attribution terms - pre-activation| / max |pre-activation| over tokens and target features."""
    z, pre, st = target_pre(model, tokens, tc_src, a, tc_tgt, b)
    h_attn, h_mlp = st[(b, "attn")], st[(b, "mlp")]
    s_src, s_dst = circuits.norm_scale(h_attn), circuits.norm_scale(h_mlp)
    block = model.blocks[b]
    probs = circuits.attention_probs(block.attn, h_attn * s_src[..., None])
    ov, enc = circuits.ov_matrices(block.attn), tc_tgt.W_enc
    e = model.embed(tokens)
    upstream = st[(a, "mlp")] - e                      # everything before layer a's MLP but the embedding
    total = circuits.residual_attribution_per_target(z, tc_src.W_dec, enc, s_dst)
    total += circuits.ov_attribution_per_target(probs, z, tc_src.W_dec, ov, enc, s_src, s_dst, block.attn_scale)
    total += s_dst[..., None] * circuits.deembedding(model.embed.weight, enc)[tokens]
    for name, v in {"embed": e, "upstream": upstream, "bias": tc_src.b_dec_out.expand_as(e)}.items():
        if name != "embed":
            total += s_dst[..., None] * (v @ enc.T)
        read = torch.einsum("bse,hde,jd->bshj", v * s_src[..., None], ov, enc)   # each head's OV image, read by j
        total += block.attn_scale * s_dst[..., None] * torch.einsum("bhts,bshj->btj", probs, read)
    total += tc_tgt.b_enc - enc @ tc_tgt.b_dec_in
    return ((total - pre).abs().max() / pre.abs().max()).item()


def main():
    run = start_run("data", "lm", "dicts", "metrics", "arrays")
    p, an = run.params["dicts"], run.params["analysis"]
    (lm,), _, _ = (lambda m: (list(m[0].values()), m[1], m[2]))(load_checkpoint(run.args.lm, run.device))
    dicts, specs, meta = load_checkpoint(run.args.dicts, run.device)
    _, val_tokens, _ = load_tokens(run.args.data)
    a, b = p["layers"]
    c = an["circuit_l1_index"]
    tc_src, tc_tgt = dicts[f"transcoder_L{a}_l1_{c}"], dicts[f"transcoder_L{b}_l1_{c}"]
    windows = fixed_windows(val_tokens, an["circuit_windows"], lm.n_ctx).to(run.device)
    n_tokens = windows.numel()

    z, pre, streams = target_pre(lm, windows, tc_src, a, tc_tgt, b)
    src = (z > 0).float().flatten(0, 1).mean(0).topk(an["sources"]).indices
    tgt = (pre > 0).float().flatten(0, 1).mean(0).topk(an["targets"]).indices
    attr = circuits.feature_attribution_total(lm, streams, z, tc_src, a, tc_tgt, b, src, tgt) / n_tokens
    s_dst = circuits.norm_scale(streams[(b, "mlp")])
    residual = ((z[..., src] * s_dst[..., None]).flatten(0, 1).sum(0)[:, None]
                * circuits.weight_products(tc_src.W_dec[src], tc_tgt.W_enc[tgt])) / n_tokens
    rand_src, rand_tgt = (random_weights(specs[f"transcoder_L{layer}_l1_{c}"], run.device) for layer in (a, b))
    random_attr = circuits.feature_attribution_total(lm, streams, z, rand_src, a, rand_tgt, b, src, tgt) / n_tokens
    weights_only = circuits.weight_products(tc_src.W_dec[src], tc_tgt.W_enc[tgt])

    patched = torch.empty_like(attr)
    base = pre[..., tgt].flatten(0, 1).mean(0)
    done = []  # every source, except in a smoke run (a few)
    for k in capped(range(len(src)), len(src), "patching"):
        _, pre_i, _ = target_pre(lm, windows, tc_src, a, tc_tgt, b, ablate=src[k].view(1))
        patched[k] = base - pre_i[..., tgt].flatten(0, 1).mean(0)
        done.append(k)
    attr, patched, residual, random_attr, weights_only = (
        t[done] for t in (attr, patched, residual, random_attr, weights_only))

    flat = lambda t: t.flatten().double().cpu().numpy()
    delta = flat(patched)
    metrics = {
        "spearman_attribution": spearman(flat(attr), delta),
        "pearson_attribution": pearson(torch.from_numpy(flat(attr)), torch.from_numpy(delta)),
        "spearman_residual_only": spearman(flat(residual), delta),
        "spearman_random_weights": spearman(flat(random_attr), delta),
        "spearman_weights_only": spearman(flat(weights_only), delta),
        "attribution_rel_err": float(np.linalg.norm(flat(attr) - delta) / np.linalg.norm(delta)),
        "ov_share": float(np.abs(flat(attr - residual)).sum() / np.abs(flat(attr)).sum()),
    }
    lm64 = lm.double()
    tc_src64, tc_tgt64 = dicts[f"transcoder_L{a}_l1_{c}"].double(), dicts[f"transcoder_L{b}_l1_{c}"].double()
    metrics["decomposition_rel_err"] = decomposition_error(lm64, windows[:an["identity_windows"]], tc_src64, a,
                                                           tc_tgt64, b)
    metrics["source_active_fraction_min"] = (z[..., src] > 0).float().flatten(0, 1).mean(0).min().item()
    arrays = {"attribution": flat(attr), "patched": delta, "random": flat(random_attr), "residual": flat(residual)}
    info = {"layers": [a, b], "l1": p["l1"][c], "tokens": n_tokens, "sources": an["sources"],
            "targets": an["targets"], "identity_tokens": int(windows[:an["identity_windows"]].numel())}
    print(metrics, flush=True)
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)


if __name__ == "__main__":
    main()
