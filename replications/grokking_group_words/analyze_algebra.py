"""Q1/Q2: the word tensors' algebra, exactly, and their CP ranks by CP-ALS (no training).

* real isotypic projectors sum to the identity (an implementation identity);
* bsc3-support (support_triples of word_tensor on real_components) against the combinatorial fusion cover built
  from characters (common.fusion_cover) for every group x word; the support of w = ab is the diagonal;
* CP-ALS rank of delta_{G,ab} over the ranks bound - rank_below .. bound, with bound the block-sum bound computed
  from the group's real components (common.block_sum_bound).
"""
import numpy as np

from shared.data.groups import by_name, real_components, word_tensor
from shared.nn.group_analysis import cp_rank, support_triples
from shared.pipeline.run import start_run, write_metrics

from .common import block_sum_bound, fusion_cover


def main():
    run = start_run("metrics", "arrays")
    p = run.params
    projector_err, contained, diagonal, strict, rows = 0.0, [], [], 0, {}
    for name in p["support_groups"]:
        group = by_name(name)
        comps = real_components(group)
        projector_err = max(projector_err, float(np.abs(sum(c.projector for c in comps) - np.eye(group.order)).max()))
        for word in p["words"]:
            support, cover = support_triples(word_tensor(group, word), comps), fusion_cover(group, word)
            contained.append(support <= cover)
            strict += len(cover) > len(support)
            rows[f"{name}/{word}"] = (len(support), len(cover))
            if word == "ab":
                diagonal.append(support == {(i, i, i) for i in range(len(comps))})

    ranks, bounds, errors, over_order = {}, {}, {}, []
    below_error = []
    for name in p["rank_groups"]:
        group = by_name(name)
        bound, _ = block_sum_bound(group)
        tried = range(max(1, bound - p["rank_below"]), bound + 1)
        rank, errs = cp_rank(word_tensor(group, "ab"), tried, threshold=p["als"]["threshold"],
                             restarts=p["als"]["restarts"], sweeps=p["als"]["sweeps"], seed=0)
        ranks[name], bounds[name], errors[name] = rank, bound, errs
        if rank is not None and rank - 1 in errs:
            below_error.append(errs[rank - 1])
        big_block = any(c.kind != "real" or c.irrep_dim > 1 for c in real_components(group))
        if big_block and rank is not None:
            over_order.append(rank > group.order)
        print(name, "rank", rank, "bound", bound, {k: f"{v:.2e}" for k, v in errs.items()})

    found = [r for r in ranks.values() if r is not None]
    metrics = {
        "projector_sum_err": projector_err,
        "support_in_cover_all": bool(all(contained)),
        "support_in_cover_count": int(sum(contained)),
        "cases": len(contained),
        "cover_strictly_larger": strict,
        "ab_support_diagonal_all": bool(all(diagonal)),
        "ranks_found": len(found),
        "rank_minus_bound_max_abs": (max(abs(ranks[g] - bounds[g]) for g in ranks) if len(found) == len(ranks)
                                     else float("nan")),
        "rank_above_order_all": bool(over_order) and bool(all(over_order)),
        "below_rank_error_min": min(below_error) if below_error else float("nan"),
        **{f"rank_{g}": (float("nan") if r is None else r) for g, r in ranks.items()},
        **{f"bound_{g}": b for g, b in bounds.items()},
    }
    arrays = {}
    for g, errs in errors.items():
        arrays[f"{g}_rank"] = np.array(list(errs), dtype=float)
        arrays[f"{g}_error"] = np.array(list(errs.values()), dtype=float)
        arrays[f"{g}_bound"] = np.array([bounds[g]], dtype=float)
    info = {"support_and_cover_sizes": {k: list(v) for k, v in rows.items()},
            "als": p["als"], "rank_errors": {g: {str(k): v for k, v in e.items()} for g, e in errors.items()}}
    write_metrics(run.args.metrics, metrics, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
