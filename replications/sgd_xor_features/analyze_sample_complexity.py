"""Sample complexity (claims X1, X2, X8, control K1): n*(d), the sample size at which the median test error over
seeds first falls below the threshold (interpolated in log n), for the network and for the random-features
control; its ratio to d log2 d, and the least-squares slope of log n* against log d. A curve that never falls
below the threshold within its grid counts as its largest n (a lower bound on n*, so a slope through it is a lower
bound too) and is counted in `*_censored`."""
import math

import numpy as np

from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics

from .common import log_slope, n_star


def curves(paths):
    """{d: (ns, median error over seeds)} from the histories of one learner."""
    out = {}
    for path in paths:
        h = read_json(path)
        errors = np.array(h["test_error"], dtype=float)
        out[h["d"]] = (h["ns"], np.median(errors, 0).tolist(), errors)
    return dict(sorted(out.items()))


def nstars(by_d, threshold):
    found = {d: n_star(ns, med, threshold) for d, (ns, med, _) in by_d.items()}
    censored = [d for d, n in found.items() if math.isinf(n)]
    bounded = {d: (by_d[d][0][-1] if d in censored else n) for d, n in found.items()}
    return bounded, censored


def main():
    run = start_run("metrics", "arrays", many=("sweeps", "features"))
    threshold = run.params["error_threshold"]
    net, rf = curves(run.args.sweeps), curves(run.args.features)
    net_n, net_censored = nstars(net, threshold)
    rf_n, rf_censored = nstars(rf, threshold)
    m = {f"net_nstar_d{d}": n for d, n in net_n.items()} | {f"rf_nstar_d{d}": n for d, n in rf_n.items()}
    m["net_nstar_over_dlogd_max"] = max(n / (d * math.log2(d)) for d, n in net_n.items())
    m["net_slope"] = log_slope(list(net_n), list(net_n.values()))
    m["net_slope_over_log2"] = log_slope(list(net_n), [n / math.log(d) ** 2 for d, n in net_n.items()])
    m["net_censored"] = len(net_censored)
    m["rf_slope"] = log_slope(list(rf_n), list(rf_n.values()))
    m["rf_censored"] = len(rf_censored)
    d_top = max(rf_n)
    m["rf_over_net_at_top_rf_d"] = rf_n[d_top] / net_n[d_top] if d_top in net_n else math.nan
    m["net_error_at_largest_n_max"] = max(med[-1] for _, med, _ in net.values())

    width = max(len(ns) for ns, _, _ in [*net.values(), *rf.values()])
    def pad(rows):
        return np.array([list(r) + [np.nan] * (width - len(r)) for r in rows], dtype=float)
    arrays = {"net_dims": np.array(list(net)), "net_ns": pad([ns for ns, _, _ in net.values()]),
              "net_median": pad([med for _, med, _ in net.values()]),
              "net_nstar": np.array(list(net_n.values())),
              "rf_dims": np.array(list(rf)), "rf_ns": pad([ns for ns, _, _ in rf.values()]),
              "rf_median": pad([med for _, med, _ in rf.values()]),
              "rf_nstar": np.array(list(rf_n.values())), "threshold": np.array(threshold)}
    seeds = len(next(iter(net.values()))[2])
    info = {"error_threshold": threshold, "net_seeds": seeds, "rf_seeds": len(next(iter(rf.values()))[2]),
            "net_dims": list(net), "rf_dims": list(rf), "net_censored_dims": net_censored,
            "rf_censored_dims": rf_censored}
    write_metrics(run.args.metrics, m, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
