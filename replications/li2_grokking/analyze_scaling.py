"""Theorem 4 / Fig. 5 (claims F9-F12): per M, the success rate (final test accuracy >= success_test) against the
training fraction p = multiplier x p*, the boundary p_b where the rate crosses boundary_level (shared.stats.crossing,
linear between grid points), and the fitted slope of log p_b against log(ln M / M) with its standard error
(shared.stats.linear_fit). The constant c is the geometric mean of p_b M / ln M over M."""
import math

import numpy as np

from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics
from shared.stats import bracket_slopes, crossing, linear_fit


def nearest(values, target):
    values = np.asarray(values)
    return int(np.argmin(np.abs(values - target)))


def main():
    run = start_run("metrics", "arrays", many=("histories",))
    p = run.params
    mults = np.array(p["scaling"]["multipliers"], dtype=float)
    seeds = p["scaling"]["seeds"]
    orders, rates, boundaries, finals, brackets, soft = [], [], [], [], [], []
    m = {}
    for path in run.args.histories:
        data = read_json(path)
        (h,) = data["history"].values()
        spec = data["runs"][0]
        order = spec["order"]
        final = np.array(h["test_acc"][-1]).reshape(len(mults), len(seeds))
        rate = (final >= p["success_test"]).mean(1)
        p_star = spec["members"][0]["p_star"]
        fractions = np.array([mm["fraction"] for mm in spec["members"]]).reshape(len(mults), len(seeds))[:, 0]
        boundary = crossing(fractions, rate, p["boundary_level"])
        above = np.nonzero(rate >= p["boundary_level"])[0]
        brackets.append((fractions[above[0] - 1], fractions[above[0]]) if len(above) and above[0] > 0
                        else (float("nan"), float("nan")))
        soft.append(crossing(fractions, final.mean(1), p["boundary_level"]))
        m[f"soft_boundary_M{order}"] = soft[-1]
        orders.append(order)
        rates.append(rate)
        boundaries.append(boundary)
        finals.append(final)
        m[f"boundary_M{order}"] = boundary
        m[f"boundary_over_pstar_M{order}"] = boundary / p_star
        m[f"pstar_M{order}"] = p_star
        for mult, r in zip(mults, rate):
            m[f"rate_M{order}_x{mult:g}"] = float(r)
    orders, rates, boundaries = np.array(orders), np.array(rates), np.array(boundaries)
    x = np.log(np.log(orders) / orders)
    fit = linear_fit(x, np.log(boundaries)) if np.all(np.isfinite(boundaries)) else \
        {"slope": float("nan"), "intercept": float("nan"), "slope_stderr": float("nan"), "r2": float("nan")}
    # The grid resolution: the slopes when each p_b sits anywhere in its grid bracket (extremes over the corners),
    # and a continuous boundary from the mean final test accuracy crossing boundary_level (both added after the
    # first run showed every p_b on the same grid interval; deviations.md).
    lo, hi = np.array(brackets).T
    slope_min, slope_max = bracket_slopes(x, np.log(lo), np.log(hi))
    soft = np.array(soft)
    soft_fit = linear_fit(x, np.log(soft)) if np.all(np.isfinite(soft)) else {"slope": float("nan"),
                                                                              "slope_stderr": float("nan")}
    m.update({"slope_bracket_min": slope_min, "slope_bracket_max": slope_max,
              "soft_slope": soft_fit["slope"], "soft_slope_stderr": soft_fit["slope_stderr"],
              "soft_constant_c": float(math.exp(np.mean(np.log(soft * orders / np.log(orders)))))})
    c_each = boundaries * orders / np.log(orders)
    m.update({
        "rate_high_min": float(rates[:, nearest(mults, 1.5)].min()),
        "rate_low_max": float(rates[:, nearest(mults, 0.6)].max()),
        "slope": fit["slope"], "slope_stderr": fit["slope_stderr"], "slope_r2": fit["r2"],
        "slope_z": abs(fit["slope"] - 1) / fit["slope_stderr"] if fit["slope_stderr"] > 0 else float("nan"),
        "intercept": fit["intercept"],
        "constant_c": float(math.exp(np.mean(np.log(c_each)))),
        "constant_c_spread": float(np.std(np.log(c_each), ddof=1) if len(c_each) > 1 else float("nan")),
        "code_c": p["critical_c"],
    })
    arrays = {"orders": orders, "multipliers": mults, "rates": rates, "boundaries": boundaries,
              "finals": np.stack(finals), "c": np.array(p["critical_c"]), "slope": np.array(fit["slope"]),
              "intercept": np.array(fit["intercept"])}
    info = {"orders": orders.tolist(), "seeds": seeds, "multipliers": mults.tolist(),
            "success": f"final test accuracy >= {p['success_test']}", "boundary": f"rate crosses {p['boundary_level']}"}
    write_metrics(run.args.metrics, m, None, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
