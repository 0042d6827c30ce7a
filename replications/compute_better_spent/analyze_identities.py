"""Exact properties of the structured layers at every (structure, width) of the sweep, for both layers of a block
(w -> 4w and 4w -> w): parameter and MAC counts against the dossier's closed forms (and the square-case forms
2 r d^1.5, 2d, 2 d^1.5, 2 d^2 / b at square widths), each layer against its matrix written out explicitly from its
factors (float64), and the muP init's per-factor spectral norm over sqrt(fan_out / fan_in) across widths."""
import math

import numpy as np
import torch

from shared.nn.parametrization import factor_table, initialize
from shared.nn.structured import build as build_layer
from shared.nn.structured import split
from shared.pipeline.run import start_run, write_metrics

from .model import EXPANSION, StructuredMLP, options, table


def formula(structure, d_in, d_out, opts):
    """(params, macs) from the closed forms (dossier section 2, rectangular)."""
    if structure == "dense":
        return d_in * d_out, d_in * d_out
    if structure == "low_rank":
        r = opts["rank"]
        return r * (d_in + d_out), r * (d_in + d_out)
    if structure == "kronecker":
        (m0, m1), (n0, n1) = split(d_in), split(d_out)
        return n0 * m0 + n1 * m1, m0 * m1 * n1 + n0 * m0 * n1
    if structure == "monarch":
        b = opts["blocks"]
        return (d_in * d_out + d_out ** 2) // b, (d_in * d_out + d_out ** 2) // b
    r = opts["rank"]
    (m1, m0), (n0, n1) = split(d_in), split(d_out)
    return r * m1 * n0 * (m0 + n1), r * m1 * n0 * (m0 + n1)


def square_formula(structure, d, opts):
    """Square d x d (d a perfect square): the paper's forms."""
    s = math.isqrt(d)
    return {"dense": (d * d, d * d), "low_rank": (2 * d * opts.get("rank", 0), 2 * d * opts.get("rank", 0)),
            "kronecker": (2 * d, 2 * d * s), "monarch": (2 * d * d // opts.get("blocks", 1),) * 2,
            "btt": (2 * opts.get("rank", 1) * d * s,) * 2}[structure]


def explicit(layer):
    """The layer's (d_out, d_in) matrix assembled from its factors by hand."""
    name = type(layer).__name__
    if name == "Dense":
        return layer.weight
    if name == "LowRank":
        return layer.u @ layer.v
    if name == "Kronecker":
        return torch.kron(layer.a, layer.b)
    if name == "Monarch":
        b = layer.blocks
        n = layer.d_out // b
        right, left = torch.block_diag(*layer.right), torch.block_diag(*layer.left)
        perm = torch.zeros(layer.d_out, layer.d_out, dtype=right.dtype)
        for i in range(b):
            for j in range(n):
                perm[j * b + i, i * n + j] = 1
        return left @ perm @ right
    r = layer.rank
    c1 = layer.core1.reshape(layer.m1, layer.m0, layer.n0, r)
    c2 = layer.core2.reshape(layer.n0, layer.m1, r, layer.n1)
    return torch.einsum("acks,kasl->klac", c1, c2).reshape(layer.d_out, layer.d_in)


def main():
    run = start_run("metrics", "arrays")
    p = run.params
    gen = run.generator(p["seed"], "identities")
    count_diff, square_diff, matrix_err, norms = 0, 0, 0.0, []
    for structure, widths in p["widths"].items():
        for width in widths:
            opts = options(structure, width, {"btt_rank": p["model"]["btt_rank"],
                                              "monarch_blocks": p["model"]["monarch_blocks"]})
            for d_in, d_out in ((width, EXPANSION * width), (EXPANSION * width, width)):
                layer = build_layer(structure, d_in, d_out, **opts).double()
                initialize(table_of(layer), gen)
                params, macs = formula(structure, d_in, d_out, opts)
                count_diff = max(count_diff, abs(layer.n_params() - params), abs(layer.macs() - macs))
                if width > p["identity_max_width"]:  # the explicit matrix of a 16384-wide layer is 8 GB
                    continue
                x = torch.randn(p["identity_inputs"], d_in, generator=gen, dtype=torch.float64)
                with torch.no_grad():
                    w = explicit(layer)
                    err = ((layer(x) - x @ w.T).norm() / (x @ w.T).norm()).item()
                matrix_err = max(matrix_err, err)
            if structure == "monarch" or math.isqrt(width) ** 2 == width:
                sq = build_layer(structure, width, width, **opts)
                square_diff = max(square_diff, abs(sq.n_params() - square_formula(structure, width, opts)[0]),
                                  abs(sq.macs() - square_formula(structure, width, opts)[1]))
            # muP init: the spectral norm of each factor (each block of a batched factor) over sqrt(fan_out/fan_in).
            torch.manual_seed(p["seed"])
            model = StructuredMLP(structure, width, p["d_input"], p["n_classes"], 1, btt_rank=p["model"]["btt_rank"], monarch_blocks=p["model"]["monarch_blocks"])
            rows = table(model, "aware")
            initialize(rows, gen)
            for row in rows:
                if row["name"].startswith(("up", "down")):
                    t = row["param"].detach().double()
                    mats = t.reshape(-1, *t.shape[-2:]) if t.dim() == 3 else t[None]
                    sigma = torch.linalg.matrix_norm(mats, ord=2).max().item()
                    norms.append(sigma / math.sqrt(row["fan_out"] / row["fan_in"]))
    metrics = {"count_formula_max_abs_diff": count_diff, "square_formula_max_abs_diff": square_diff,
               "explicit_matrix_max_rel_err": matrix_err,
               "init_norm_ratio_min": min(norms), "init_norm_ratio_max": max(norms)}
    write_metrics(run.args.metrics, metrics, info={"n_factors": len(norms)},
                  arrays={"init_norm_ratio": np.array(norms)}, arrays_path=run.args.arrays)
    print(metrics)


def table_of(layer):
    return factor_table({"layer": layer}, "mup", "adam", split_by_factors=True)


if __name__ == "__main__":
    main()
