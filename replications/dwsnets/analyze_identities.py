"""Exact symmetry properties, in float64 on the sine INRs and the trained models.

  * invariance: the trained DWSNet's prediction under random hidden-neuron permutations of test INRs (relative
    change); control: the trained MLP's, which must change.
  * equivariance of one DWS layer (random weights and biases) on real INRs; control: the same layer plus a fixed
    position-dependent offset on W_2 (not constant over hidden axes), which must break it.
  * the group action: a permuted INR computes the same function (sine activations, float64).
  * completeness: the layer's span equals the dimension of all equivariant linear maps (widths 2-3-2-1), and its
    parameter count equals the closed form dws_param_count (which has no hidden width in it).
"""
import numpy as np
import torch
from safetensors.numpy import load_file

from shared.data.inr import from_arrays, inr_forward
from shared.nn.weight_space import (
    DWSLayer,
    commutant_dimension,
    dws_param_count,
    layer_span_rank,
    permute_weight_space,
    random_hidden_permutations,
)
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import rel_err

from .common import load_inrs, widths_of
from .model import build


def largest(path):
    models, specs, meta = load_models(path, build)
    name = max(specs, key=lambda k: specs[k]["n_train"])
    return models[name].double(), meta


def main():
    run = start_run("dws", "mlp", "data", "metrics", "arrays")
    p = run.params
    torch.manual_seed(p["seed"])
    gen = run.generator(p["seed"], "permutations")
    w, b, _ = load_inrs(run.args.data)["test"]
    w, b = [t[: p["n_inrs"]].double() for t in w], [t[: p["n_inrs"]].double() for t in b]
    widths = widths_of(w)
    dws, meta = largest(run.args.dws)
    mlp, _ = largest(run.args.mlp)
    layer = DWSLayer(len(w), widths[0], widths[-1], 1, 4).double()
    for q in layer.biases:
        torch.nn.init.normal_(q, std=0.1)
    broken_offset = torch.randn(1, widths[2], widths[1], 4, dtype=torch.float64)  # depends on hidden positions
    raw_w, raw_b = from_arrays({k.split(".", 1)[1]: v for k, v in load_file(run.args.data).items()
                                if k.startswith("test.")})
    raw_w, raw_b = [t[: p["n_inrs"]].double() for t in raw_w], [t[: p["n_inrs"]].double() for t in raw_b]
    x = torch.linspace(-3.2, 3.2, 257, dtype=torch.float64)[:, None]

    inv, mlp_change, equi, broken, function = [], [], [], [], []
    with torch.no_grad():
        wc, bc = [t[..., None] for t in w], [t[..., None] for t in b]
        for _ in range(p["perms"]):
            perms = random_hidden_permutations(widths, gen)
            pw, pb = permute_weight_space(w, b, perms)
            inv.append(rel_err(dws(pw, pb), dws(w, b)))
            mlp_change.append(rel_err(mlp(pw, pb), mlp(w, b)))
            out_w, out_b = layer(wc, bc)
            perm_out = permute_weight_space(out_w, out_b, perms)
            out_perm = layer(*permute_weight_space(wc, bc, perms))
            equi.append(max(rel_err(a, c) for a, c in zip(perm_out[0] + perm_out[1], out_perm[0] + out_perm[1])))
            bw = lambda ws: [ws[0], ws[1] + broken_offset, *ws[2:]]
            broken.append(rel_err(permute_weight_space(bw(out_w), out_b, perms)[0][1], bw(out_perm[0])[1]))
            fw, fb = permute_weight_space(raw_w, raw_b, perms)
            function.append(rel_err(inr_forward(fw, fb, x, p["w0"]), inr_forward(raw_w, raw_b, x, p["w0"])))
    small = (2, 3, 2, 1)
    # the layer never sees the hidden widths: one set of parameters serves any width (here 16 and 32)
    count = sum(q.numel() for q in layer.parameters())
    span, commutant = layer_span_rank(small), commutant_dimension(small)
    metrics = {
        "dws_invariance_rel_err": max(inv),
        "mlp_permutation_rel_change": min(mlp_change),
        "layer_equivariance_rel_err": max(equi),
        "broken_layer_equivariance_rel_err": min(broken),
        "permuted_inr_function_rel_err": max(function),
        "layer_spans_all_equivariant_maps": span == commutant,
        "layer_param_count_matches_formula": count == dws_param_count(len(widths) - 1, widths[0], widths[-1], 1, 4),
    }
    info = {"widths": widths, "inrs": p["n_inrs"], "permutations": p["perms"], "dtype": "float64",
            "span_rank": span, "commutant_dimension": commutant, "small_widths": small,
            "layer_params": count}
    arrays = {"dws_invariance": np.array(inv), "mlp_change": np.array(mlp_change), "equivariance": np.array(equi)}
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics, info)


if __name__ == "__main__":
    main()
