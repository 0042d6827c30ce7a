"""Metrics of the one-step sweeps at the analysed depth L: muP's eta*_n against eta*_inf (M1) and its fitted rate
(M3), the polynomial coefficients phi_1 and phi_2..L against their muP limits (M6), SP's eta*_n ~ 1/n (M4), NTP
(report only: no claim), and the identities (step polynomial vs a direct step; the init table as built).
Every fitted exponent is shared.stats.linear_fit on log-log axes, with its standard error."""
import numpy as np

from shared.pipeline.run import start_run, write_metrics
from shared.stats import linear_fit

from .common import load_results


def fit(widths, values):
    return linear_fit(np.log(widths), np.log(values))


def main():
    run = start_run("onestep", "metrics", "arrays")
    p = run.params
    r, meta = load_results(run.args.onestep)
    o = p["onestep"]
    widths = np.array(o["widths"], float)
    order = np.argsort(widths)
    widths = widths[order]
    b = o["depths"].index(p["depth"])
    s = {name: i for i, name in enumerate(p["schemes"])}
    pick = lambda key, scheme: r[key][s[scheme], b][order]  # (widths, seeds)  # noqa: E731
    eta_inf = float(r["eta_inf"][b])
    ref = int(np.searchsorted(widths, p["ref_width"]))

    mup = pick("eta_star", "mup")
    mup_mean = mup.mean(axis=1)
    rms_err = np.sqrt(((mup - eta_inf) ** 2).mean(axis=1))
    rate = fit(widths, rms_err)
    rate_mean_abs = fit(widths, np.abs(mup - eta_inf).mean(axis=1))
    phi1 = pick("phi1_err", "mup").mean(axis=1)
    phi1_fit = fit(widths, phi1)
    higher = pick("higher", "mup").mean(axis=1)
    higher_fit = fit(widths, higher)
    sp = pick("eta_star", "sp").mean(axis=1)
    sp_fit = fit(widths, sp)
    n_eta = widths * sp
    ntp = pick("eta_star", "ntp")
    ntp_pred = pick("eta_ntk_pred", "ntp")
    mup_mean_largest_two = mup_mean[-2:]

    metrics = {
        "eta_inf": eta_inf,
        "mup_eta_rel_err_largest": abs(mup_mean[-1] - eta_inf) / eta_inf,
        "mup_eta_std_largest": float(mup[-1].std(ddof=1)) if mup.shape[1] > 1 else 0.0,
        "mup_rate_slope": rate["slope"], "mup_rate_slope_stderr": rate["slope_stderr"], "mup_rate_r2": rate["r2"],
        "mup_rate_slope_mean_abs": rate_mean_abs["slope"],
        "mup_rate_slope_mean_abs_stderr": rate_mean_abs["slope_stderr"],
        "mup_top_two_rel_diff": abs(mup_mean_largest_two[1] - mup_mean_largest_two[0]) / eta_inf,
        "mup_phi1_err_largest": phi1[-1], "mup_phi1_ratio": phi1[-1] / phi1[ref],
        "mup_phi1_slope": phi1_fit["slope"], "mup_phi1_slope_stderr": phi1_fit["slope_stderr"],
        "mup_higher_ratio": higher[-1] / higher[ref], "mup_higher_decreasing": bool(np.all(np.diff(higher) < 0)),
        "mup_higher_slope": higher_fit["slope"], "mup_higher_slope_stderr": higher_fit["slope_stderr"],
        "sp_eta_ratio": sp[0] / sp[-1], "sp_n_eta_spread": n_eta.max() / n_eta.min(),
        "sp_slope": sp_fit["slope"], "sp_slope_stderr": sp_fit["slope_stderr"],
        "ntp_eta_rel_change_top": abs(ntp[-1].mean() - ntp[ref].mean()) / ntp[ref].mean(),
        "ntp_eta_over_eta_inf_largest": ntp[-1].mean() / eta_inf,
        "ntp_eta_vs_lazy_pred_rel_err_largest": float(np.abs(ntp[-1] / ntp_pred[-1] - 1).mean()),
        "ntp_eta_seed_cv_largest": float(ntp[-1].std(ddof=1) / ntp[-1].mean()) if ntp.shape[1] > 1 else 0.0,
        "poly_direct_rel_err": float(np.nanmax(r["poly_err"])),
        "init_table_err": float(np.nanmax(r["table_err"])),
        "hidden_var_err": float(np.abs(r["hidden_var"][:, :, order][:, :, -1] - 1).max()),
    }
    for i, n in enumerate(widths.astype(int)):
        metrics.update({f"mup_eta_mean_n{n}": mup_mean[i], f"mup_eta_std_n{n}": float(mup[i].std()),
                        f"mup_phi1_err_n{n}": phi1[i], f"mup_higher_n{n}": higher[i], f"sp_eta_mean_n{n}": sp[i],
                        f"sp_n_eta_n{n}": n_eta[i], f"ntp_eta_mean_n{n}": float(ntp[i].mean()),
                        f"ntp_eta_std_n{n}": float(ntp[i].std())})
    arrays = {"widths": widths, "eta_inf": np.array(eta_inf), "depth": np.array(p["depth"]),
              **{f"{k}_{scheme}": pick(k, scheme) for k in ("eta_star", "phi1_err", "higher") for scheme in s},
              "ntp_pred": ntp_pred}
    info = {"depth": p["depth"], "widths": widths.astype(int).tolist(), "seeds": len(o["seeds"]),
            "rate_fit": "log RMS over seeds of |eta*_n - eta*_inf| on log n (linear_fit)",
            "ntp": "report only: NTP in SP form (V ~ N(0,1/n), hidden lr / n); the paper's NTP definition unread"}
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
