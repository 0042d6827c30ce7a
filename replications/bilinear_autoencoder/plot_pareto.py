"""Error against density: one line per bilinear autoencoder kind over the Hoyer penalty alpha, TopK SAEs as crosses."""
from matplotlib.ticker import FormatStrFormatter, LogLocator

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
kinds = [k for k in ("vanilla", "ordered", "mixed", "combined") if f"{k}_error" in arrays]
fig, axes = subplots(1, 1, size=4.6)
fig.set_size_inches(6.4, 4.6)
ax = axes[0, 0]
for kind in kinds:
    alpha, error, density = arrays[f"{kind}_alpha"], arrays[f"{kind}_error"], arrays[f"{kind}_density"]
    (line,) = ax.plot(density, error, "o-", ms=4, lw=1.2, label=kind)
    for a, x, y in zip(alpha, density, error):
        ax.annotate(f"{a:g}", (x, y), xytext=(3, 3), textcoords="offset points", fontsize=6, color=line.get_color())
if "topk_error" in arrays:
    ax.plot(arrays["topk_density"], arrays["topk_error"], "kx", ms=6, mew=1.5, ls="none", label="TopK SAE")
    for k, x, y in zip(arrays["topk_k"], arrays["topk_density"], arrays["topk_error"]):
        ax.annotate(f"k={k}", (x, y), xytext=(3, 3), textcoords="offset points", fontsize=6)
ax.set_xscale("log")
ax.xaxis.set_minor_locator(LogLocator(subs=(2, 5)))
ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
ax.xaxis.set_minor_formatter(FormatStrFormatter("%g"))
ax.set_xlabel("mean Hoyer density (log)")
ax.set_ylabel("held-out lifted error")
ax.set_ylim(bottom=0)
ax.tick_params(which="both", labelsize=7)
ax.legend(fontsize=7, title="labels: alpha", title_fontsize=6)
ax.set_title(f"{args.title}: error against density", fontsize=9)
save(fig, args.out)
