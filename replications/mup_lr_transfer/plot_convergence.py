"""muP convergence on log-log axes: |eta*_n - eta*_inf| (RMS over seeds), the phi_1 error and ||phi_2..L||,
with an n^-1/2 reference."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
widths, eta_inf = a["widths"], float(a["eta_inf"])
fig, axes = subplots(1, 1, size=3.6)
ax = axes[0, 0]
rms = np.sqrt(((a["eta_star_mup"] - eta_inf) ** 2).mean(axis=1)) / eta_inf
ax.plot(widths, rms, "o-", ms=4, label="RMS |eta*_n - eta*_inf| / eta*_inf")
ax.plot(widths, a["phi1_err_mup"].mean(axis=1), "s-", ms=4, label="phi_1 relative error")
ax.plot(widths, a["higher_mup"].mean(axis=1), "^-", ms=4, label="||(phi_2..phi_L)|| / sqrt(m)")
ax.plot(widths, rms[0] * np.sqrt(widths[0] / widths), "k:", lw=0.8, label="n^-1/2")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("width n")
ax.set_ylabel("relative error (see legend)")
ax.legend(fontsize=6)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
