"""Q4/Q5: the bilinear surrogate trained on the full table at a range of widths, per group.

Exact fit: max |centred logit - (one-hot - 1/n)| < fit_tol. The width threshold K* is the smallest width at which
any seed fits; the theory's prediction is the CP rank of the centred word tensor delta - 1/n (the centred loss sees
no trivial triple), found by CP-ALS over bound - 2 .. bound (bound: the block-sum bound without the trivial block).
Structure at K*: isotypic alignment of the units of the members that fit; for the Strassen group, the number of
units serving its 2-dimensional real block (Strassen: 7).
"""
import numpy as np

from shared.data.groups import real_components, word_tensor
from shared.nn.group_analysis import cp_rank, unit_alignment
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import block_sum_bound, centred_error, task


def main():
    run = start_run("metrics", "arrays", many=("checkpoints",))
    p = run.params
    metrics, arrays, info, shares = {}, {}, {}, []
    meta_any = None
    for path in run.args.checkpoints:
        models, specs, meta = load_models(path)
        meta_any = meta_any or meta
        group_name = next(iter(specs.values()))["group"]
        group, a, b, labels = task(group_name, p["word"])
        comps = real_components(group)
        widths = sorted(s["width"] for s in specs.values())
        errors = np.array([centred_error(models[f"K{K}"], a, b, labels).numpy() for K in widths])  # (widths, seeds)
        fits = errors < p["fit_tol"]
        fitting = [K for K, f in zip(widths, fits) if f.any()]
        threshold = min(fitting) if fitting else float("nan")

        _, bound_c = block_sum_bound(group)
        target = word_tensor(group, p["word"]) - 1.0 / group.order
        rank, errs = cp_rank(target, range(max(1, bound_c - 2), bound_c + 1), threshold=p["als"]["threshold"],
                             restarts=p["als"]["restarts"], sweeps=p["als"]["sweeps"], seed=0)
        rank = float("nan") if rank is None else rank
        below = [K for K, f in zip(widths, fits) if f.any() and K <= rank - 2]

        units, share_g = {}, []
        if fitting:
            model = models[f"K{threshold}"]
            for i in np.nonzero(fits[widths.index(threshold)])[0]:
                al = unit_alignment(model.member_state(int(i)), comps)
                live = al["norm"] >= p["live_norm"] * al["norm"].max()
                aligned = (al["purity"] >= p["purity"]) & al["same_component"]
                share_g.append(float(aligned[live].mean()))
                for j, c in enumerate(comps):
                    units.setdefault(c.label, []).append(int((live & aligned & (al["component"] == j)).sum()))
        shares.extend(share_g)
        metrics.update({
            f"threshold_{group_name}": threshold,
            f"centred_rank_{group_name}": rank,
            f"threshold_minus_rank_{group_name}": threshold - rank,
            f"fits_below_rank_minus_2_{group_name}": bool(below),
            f"fit_rate_at_threshold_{group_name}": float(fits[widths.index(threshold)].mean()) if fitting else 0.0,
            f"aligned_unit_share_{group_name}": float(np.mean(share_g)) if share_g else float("nan"),
        })
        if group_name == p["strassen_group"]:
            two = [c.label for c in comps if c.kind == "real" and c.irrep_dim == 2]
            counts = units.get(two[0], []) if two else []
            metrics["strassen_block_units"] = float(np.median(counts)) if counts else float("nan")
            metrics["strassen_block_units_all_seven"] = bool(counts) and all(c == 7 for c in counts)
        arrays[f"{group_name}_widths"] = np.array(widths, float)
        arrays[f"{group_name}_errors"] = errors
        arrays[f"{group_name}_rank"] = np.array([rank], float)
        info[group_name] = {"rank_errors": {str(k): v for k, v in errs.items()}, "units_per_component": units,
                            "fit_rate": dict(zip(map(str, widths), fits.mean(1).tolist()))}
    metrics["aligned_unit_share_min"] = float(min(shares)) if shares else float("nan")
    write_metrics(run.args.metrics, metrics, meta_any, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
