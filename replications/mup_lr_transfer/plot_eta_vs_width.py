"""One-step optimal learning rate against width: muP, SP and NTP (seed mean +- std), eta*_inf and a 1/n line."""
from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
widths, eta_inf = a["widths"], float(a["eta_inf"])
fig, axes = subplots(1, 2, size=3.6)
ax, sp_ax = axes[0, 0], axes[0, 1]
for scheme, marker in (("mup", "o"), ("ntp", "s")):
    eta = a[f"eta_star_{scheme}"]
    ax.errorbar(widths, eta.mean(axis=1), yerr=eta.std(axis=1), fmt=marker + "-", ms=4, capsize=2,
                label=f"{scheme} eta*_n")
ax.axhline(eta_inf, color="k", ls="--", lw=0.8, label="eta*_inf (closed form)")
ax.set_xscale("log")
ax.set_xlabel("width n")
ax.set_ylabel("one-step optimal lr")
ax.legend(fontsize=6)
sp = a["eta_star_sp"]
sp_ax.errorbar(widths, sp.mean(axis=1), yerr=sp.std(axis=1), fmt="^-", ms=4, capsize=2, label="sp eta*_n")
sp_ax.plot(widths, sp.mean(axis=1)[0] * widths[0] / widths, "k:", lw=0.8, label="1/n")
sp_ax.set_xscale("log")
sp_ax.set_yscale("log")
sp_ax.set_xlabel("width n")
sp_ax.legend(fontsize=6)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
