"""Cumulative averaging (claim F7, identity I2): into A, average layer groups 1..k (shallow -> deep) or the last k
(deep -> shallow), the rest from A; the midpoint barrier against the two full models' mean, for k = 0 .. L.

Layer j's increment is the mean of what adding it adds in either order: (C_s(j) - C_s(j-1) + C_d(L-j+1) -
C_d(L-j)) / 2; the increments sum to the full barrier. middle_margin = (sum of the middle third's increments -
the larger of the first and last thirds' sums) / full barrier, thirds of floor(L/3) layers at either end.
Several seed pairs: each metric is the mean over pairs, the identity's gap the worst pair, the largest increment's
layer that of the mean increments; the arrays draw the first pair."""
import numpy as np

from shared.nn.interpolation import interpolate, layer_groups
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import MEASURES, Evaluator, barriers_of, load_data, over_pairs, pairs_of, ratio, reference, states_at

WORST = {"all_layers_gap": max}  # an identity's error: the worst seed pair, not the mean


def pair_curves(ev, models, specs, pair):
    """One seed pair's cumulative curves, per-layer increments and metrics."""
    a, b = states_at(models, specs, pair=pair)
    ref = reference(ev(a), ev(b))
    full = barriers_of(ev(interpolate(a, b, 0.5)), ref)
    groups = list(layer_groups(a).values())
    n = len(groups)
    curves = {"shallow": {m: [0.0] for m in MEASURES}, "deep": {m: [0.0] for m in MEASURES}}
    for k in range(1, n + 1):
        for order, chosen in (("shallow", groups[:k]), ("deep", groups[n - k:])):
            keys = [key for g in chosen for key in g]
            bar = barriers_of(ev(interpolate(a, b, 0.5, keys, base="a")), ref)
            for m in MEASURES:
                curves[order][m].append(bar[m])
    cs, cd = np.array(curves["shallow"]["train_loss"]), np.array(curves["deep"]["train_loss"])
    inc = np.array([(cs[j] - cs[j - 1] + cd[n - j + 1] - cd[n - j]) / 2 for j in range(1, n + 1)])
    third = n // 3
    first, middle, last = inc[:third].sum(), inc[third:n - third].sum(), inc[n - third:].sum()
    m = {
        "middle_margin": ratio(middle - max(first, last), full["train_loss"]),
        "share_first": ratio(first, full["train_loss"]), "share_middle": ratio(middle, full["train_loss"]),
        "share_last": ratio(last, full["train_loss"]),
        "argmax_increment_layer": int(np.argmax(inc)),
        "all_layers_gap": max(abs(cs[-1] - full["train_loss"]), abs(cd[-1] - full["train_loss"])),
        "full_barrier": full["train_loss"],
    }
    ts, td = np.array(curves["shallow"]["test_loss"]), np.array(curves["deep"]["test_loss"])
    inc_t = np.array([(ts[j] - ts[j - 1] + td[n - j + 1] - td[n - j]) / 2 for j in range(1, n + 1)])
    m["middle_margin_test"] = ratio(inc_t[third:n - third].sum() - max(inc_t[:third].sum(), inc_t[n - third:].sum()),
                                    full["test_loss"])
    return m, curves, inc, third, list(layer_groups(a))


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.checkpoint)
    data = load_data(run.args.data, p["dataset"])
    ev = Evaluator(next(iter(models.values())), data, run.device, p["eval_train_max"], p["chunk"])
    pairs = pairs_of(specs)
    per_pair = [pair_curves(ev, models, specs, pair) for pair in pairs]
    m = over_pairs([r[0] for r in per_pair], WORST)
    m["argmax_increment_layer"] = int(np.argmax(np.mean([r[2] for r in per_pair], axis=0)))  # of the mean increments
    _, curves, inc, third, names = per_pair[0]  # the figures draw the first pair
    n = len(names)
    arrays = {"k": np.arange(n + 1), "increments": inc, "groups": np.array(names), "third": np.array(third)}
    for order in curves:
        for meas in MEASURES:
            arrays[f"{order}_{meas}"] = np.array(curves[order][meas])
    info = {"groups": names, "thirds": [third, n - 2 * third, third], "direction": "into A",
            "increments_train_loss": [round(float(v), 4) for v in inc], "figures_pair": pairs[0],
            "per_pair": {str(k): r[0] for k, r in zip(pairs, per_pair)}}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m, info["increments_train_loss"])


if __name__ == "__main__":
    main()
