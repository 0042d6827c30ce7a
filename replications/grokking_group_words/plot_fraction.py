"""Success rate against training fraction (the boundary) and steps to generalise with the fitted slope."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.6)
ax = axes[0, 0]
ax.plot(arrays["fractions"], arrays["success_rate"], "o-")
boundary, sd = arrays["boundary"]
if np.isfinite(boundary):
    ax.axvline(boundary, color="k", ls="--", lw=1, label=f"0.5 crossing {boundary:.3f} (sd {sd:.3f})")
    ax.legend(fontsize=7)
ax.set_xlabel("training fraction")
ax.set_ylabel("share of seeds generalising")
ax.set_ylim(-0.05, 1.05)
ax = axes[0, 1]
ok = np.isfinite(arrays["t_test"]) & (arrays["t_test"] > 0)
ax.semilogy(arrays["member_fraction"][ok], arrays["t_test"][ok], "o", label="steps to test acc >= 0.95")
slope, intercept, stderr = arrays["fit"]
if np.isfinite(slope):
    x = np.linspace(arrays["member_fraction"][ok].min(), arrays["member_fraction"][ok].max(), 20)
    ax.semilogy(x, np.exp(intercept + slope * x), "k--", label=f"slope {slope:.2f} +- {stderr:.2f}")
ax.set_xlabel("training fraction")
ax.set_ylabel("steps")
ax.legend(fontsize=7)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
