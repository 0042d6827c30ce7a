"""The two phases (claims X3-X7, controls K2-K4, identity I1), from the neurons' logged statistics.

Per XOR run, t25 is the first logged step with test error below `phase_error`.
  * signal finding (X3): the median over neurons of ||P w|| / ||w - P w|| at t25 over its value at init; the
    control K2 is the same ratio, at the same step, of the run from the same init trained on random labels.
  * amplification (X4, X5): |a_k| at the end over |a_k| at t25, median over the `top_fraction` of neurons with the
    largest final signal norm, and median over the others.
  * balancing (X6): how many of the four feature directions +-(e_i +- e_j)/sqrt 2 are the nearest direction of a
    neuron with cosine > cos_threshold at the end; the worst run.
  * sufficiency (X7): test error with only the top_fraction of neurons kept (the others' a_k zeroed); control K3
    keeps the same number with the smallest signal norms.
    Its control: the same count at init (the best run).
  * untrained control (K4): test error at init. Identity (I1): the stacked network against the formula per run.
Every value but the worst-run count is the median over the XOR runs (one per seed)."""
import math

import numpy as np
import torch

from shared.io.files import read_json
from shared.nn.feature_learning import feature_projection, xor_features
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import test_error, test_set

LABELS = ("xor", "shuffled")


def keep_only(net, keep):
    """A copy of the stacked net's a with every neuron outside `keep` (runs, width) bool zeroed."""
    out = type(net)(net.a.shape[0], net.W.shape[2], net.W.shape[1], 0.0)
    out.load_state_dict(net.state_dict())
    with torch.no_grad():
        out.a.mul_(keep.float())
    return out


def formula_gap(net, x):
    """max |stacked f_r(x) - sum_k a_rk relu(w_rk . x)| over runs and points, float64."""
    net64 = net.double()
    x = x.double()
    stacked = net64(x)
    loop = torch.stack([(torch.relu(x @ net64.W[r].T) * net64.a[r]).sum(1) for r in range(net64.a.shape[0])])
    return float((stacked - loop).abs().max())


def main():
    run = start_run("checkpoint", "history", "trajectory", "metrics", "arrays")
    p = run.params
    models, _, meta = load_models(run.args.checkpoint)
    net = models["net"]
    h = read_json(run.args.history)
    tr = dict(np.load(run.args.trajectory))
    d, n_seeds, width = h["d"], len(h["seeds"]), net.W.shape[1]
    shape = (len(tr["step"]), n_seeds, len(LABELS), width)
    sig, orth, abs_a = (tr[k].reshape(shape) for k in ("signal", "orthogonal", "abs_a"))
    err = tr["test_error"].reshape(shape[:3])
    ratio = sig / np.maximum(orth, 1e-30)

    top_k = max(1, round(p["top_fraction"] * width))
    gains, top_gains, controls, top_growth, rest_growth, t25_steps = [], [], [], [], [], []
    for s in range(n_seeds):
        hit = np.flatnonzero(err[:, s, 0] < p["phase_error"])
        if len(hit) == 0:
            for values in (gains, top_gains, controls, top_growth, rest_growth):
                values.append(math.nan)
            continue
        t = hit[0]
        t25_steps.append(int(tr["step"][t]))
        gains.append(np.median(ratio[t, s, 0]) / np.median(ratio[0, s, 0]))
        top_gains.append(np.median(np.sort(ratio[t, s, 0])[-top_k:]) / np.median(ratio[0, s, 0]))
        controls.append(np.median(ratio[t, s, 1]) / np.median(ratio[0, s, 1]))
        order = np.argsort(-sig[-1, s, 0])
        growth = abs_a[-1, s, 0] / np.maximum(abs_a[t, s, 0], 1e-30)
        top_growth.append(np.median(growth[order[:top_k]]))
        rest_growth.append(np.median(growth[order[top_k:]]))

    basis, features = xor_features(d, p["support"])
    final = feature_projection(net.W.detach(), basis, features)
    xor_runs = torch.arange(n_seeds) * len(LABELS)
    aligned = final["cos"][xor_runs] > p["cos_threshold"]
    claimed = [len(set(final["nearest"][r][aligned[i]].tolist())) for i, r in enumerate(xor_runs.tolist())]
    init_nearest = tr["nearest"][0].reshape(n_seeds, len(LABELS), width)[:, 0]
    init_aligned = tr["cos"][0].reshape(n_seeds, len(LABELS), width)[:, 0] > p["cos_threshold"]
    claimed_init = [len(set(init_nearest[s][init_aligned[s]].tolist())) for s in range(n_seeds)]

    x_test, y_test = test_set(d, p["test_points"], p["support"], run.generator(0, f"test_d{d}"))
    order = torch.argsort(final["signal"], dim=1, descending=True)
    top = torch.zeros_like(final["signal"], dtype=torch.bool).scatter_(1, order[:, :top_k], True)
    bottom = torch.zeros_like(top).scatter_(1, order[:, -top_k:], True)
    err_top = test_error(keep_only(net, top), x_test, y_test)[xor_runs]
    err_bottom = test_error(keep_only(net, bottom), x_test, y_test)[xor_runs]
    err_final = test_error(net, x_test, y_test)

    med = lambda v: float(np.median(v))  # NaN if any run never reached the phase error
    m = {"signal_ratio_gain_at_t25": med(gains),
         "shuffled_signal_ratio_gain_at_t25": med(controls),
         "top_ratio_gain_at_t25": med(top_gains),
         "t25_step_median": med(t25_steps) if t25_steps else math.nan,
         "runs_reaching_phase_error": len(t25_steps),
         "top_a_growth_after_t25": med(top_growth),
         "rest_a_growth_after_t25": med(rest_growth),
         "features_claimed_min": min(claimed),
         "features_claimed_init_max": max(claimed_init),
         "aligned_fraction": med(aligned.double().mean(1).numpy()),
         "top_only_error": med(err_top.numpy()),
         "bottom_only_error": med(err_bottom.numpy()),
         "final_error_xor": med(err_final[xor_runs].numpy()),
         "final_error_shuffled": med(err_final[xor_runs + 1].numpy()),
         "init_error": med(err[0, :, 0]),
         "stacked_formula_max_abs": formula_gap(net, x_test[:256])}
    curve = lambda a: np.median(a, axis=(1, 3))  # median over seeds and neurons: (logs, labels)
    arrays = {"step": tr["step"], "ratio": curve(ratio), "abs_a": curve(abs_a),
              "top_abs_a": np.median(np.sort(abs_a, axis=3)[..., -top_k:], axis=(1, 3)),
              "error": np.median(err, axis=1), "t25": np.array(med(t25_steps) if t25_steps else np.nan),
              "final_cos": final["cos"][xor_runs].numpy(), "final_plane_cos": final["plane_cos"][xor_runs].numpy()}
    info = {"d": d, "seeds": h["seeds"], "width": width, "top_k": top_k, "samples_per_run": h["samples_per_run"],
            "phase_error": p["phase_error"], "cos_threshold": p["cos_threshold"], "features_claimed": claimed,
            "test_points": p["test_points"]}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
