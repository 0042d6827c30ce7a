"""The paper's analyses of one model on a batch of prompts, for any `readout` module (embeddings (N, T, d) ->
output embedding (N, d); `readout(emb, upto=l)` for layer l) with an `unembed` matrix (vocab, d) and `n_layer`.

- J+: shared.nn.dynamic_linear.dynamic_linear_map (every norm, gate and softmax factor frozen by forward hooks on a
  float64 copy); the reconstruction sum_t J+_t x_t against y, in float64 and float32.
- J: the ordinary Jacobian of the same function (nothing frozen), the paper's contrast (Fig. 3).
- the SVD of the stacked J+ (d x T d) and of each layer's J+, and the decoding of the top left singular vector
  through the unembedding (its sign chosen so that it points along y, as the output it explains).
"""
import copy
import statistics

import torch

from shared.nn.dynamic_linear import dynamic_linear_map, jacobian_rows
from shared.nn.linear_operators import svd_summary
from shared.stats import rel_err


def reconstruct(weight, emb):
    """sum_t J_t x_t: weight (N, d_out, T, d), emb (N, T, d) -> (N, d_out)."""
    return torch.einsum("nitj,ntj->ni", weight, emb.to(weight.dtype))


def ordinary_jacobian(readout, emb):
    """The plain Jacobian of readout at emb, float64, one output coordinate at a time: (N, d_out, T, d)."""
    m = copy.deepcopy(readout).double().eval()
    z = emb.detach().double().requires_grad_(True)
    out = m(z)
    return jacobian_rows(out, z), out.detach()


def spectrum(weight):
    """Singular values (N, d_out) and top left singular vectors (N, d_out) of each prompt's stacked map."""
    u, s, _ = torch.linalg.svd(weight.flatten(2), full_matrices=False)
    return s, u[:, :, 0]


def decode(unembed, top_vector, y, k=5):
    """Top-k tokens of the top singular vector (sign aligned with y) and of y itself, through the unembedding."""
    sign = torch.sign((top_vector * y).sum(-1, keepdim=True))
    sign[sign == 0] = 1
    w = unembed.to(y.dtype)
    return (sign * top_vector @ w.T).topk(k, -1).indices, (y @ w.T).topk(k, -1).indices


def low_rank(s, d):
    """Median over prompts of stable rank / d and of (values holding 90% of the energy) / d."""
    rows = [svd_summary(row) for row in s]
    return (statistics.median(r["stable_rank"] for r in rows) / d, statistics.median(r["rank_90"] for r in rows) / d)


def analyse(readout, emb, reference, layers, with_float32=True):
    """Metrics and arrays of one model: J+, its exactness, its spectrum and decoding, and the layer-wise maps.
    `reference` (N, d) is the output embedding as the model's own forward computes it (claim I3)."""
    emb = emb.detach()
    plus = dynamic_linear_map(readout, emb, forward=lambda m, z: m(z))
    y = plus.output
    d = y.shape[-1]
    err64 = rel_err(reconstruct(plus.weight, emb), y, "l2", per_sample=True)
    out = {"recon_rel_err_f64": err64.max().item(), "bias_rel": (plus.bias.norm(dim=-1) / y.norm(dim=-1)).max().item(),
           "readout_rel_err": rel_err(y, reference.to(y.dtype), "l2", per_sample=True).max().item()}
    if with_float32:
        plus32 = dynamic_linear_map(readout, emb, forward=lambda m, z: m(z), dtype=torch.float32, check=False)
        out["recon_rel_err_f32"] = rel_err(reconstruct(plus32.weight, emb), plus32.output, "l2", per_sample=True).max().item()
    jac, _ = ordinary_jacobian(readout, emb)
    ordinary = reconstruct(jac, emb)
    out["ordinary_recon_rel_err_min"] = rel_err(ordinary, y, "l2", per_sample=True).min().item()

    s, top = spectrum(plus.weight)
    out["stable_rank_fraction"], out["rank90_fraction"] = low_rank(s, d)
    decoded, predicted = decode(readout.unembed, top, y)
    out["decode_top1_match"] = (decoded[:, 0] == predicted[:, 0]).double().mean().item()
    overlap = [len(set(a.tolist()) & set(b.tolist())) / decoded.shape[1] for a, b in zip(decoded, predicted)]
    out["decode_top5_overlap"] = statistics.fmean(overlap)

    layer_match, layer_rank = [], []
    for layer in layers:
        stop = lambda m, z, layer=layer: m(z, layer)
        lm = plus if layer == readout.n_layer - 1 else dynamic_linear_map(readout, emb, forward=stop)
        ls, ltop = spectrum(lm.weight)
        ldecoded, _ = decode(readout.unembed, ltop, lm.output)
        layer_match.append((ldecoded[:, 0] == predicted[:, 0]).double().mean().item())
        layer_rank.append(low_rank(ls, d)[0])
    out["layer_match_gain"] = layer_match[-1] - layer_match[0]
    out["layer_stable_rank_fraction_max"] = max(layer_rank)
    arrays = {"singular_values": (s / s[:, :1]).median(0).values.cpu().numpy(), "layer_match": layer_match,
              "layer_stable_rank": layer_rank, "layers": list(layers), "y": y.flatten().cpu().numpy(),
              "detached": reconstruct(plus.weight, emb).flatten().cpu().numpy(),
              "ordinary": ordinary.flatten().cpu().numpy()}
    return out, arrays
