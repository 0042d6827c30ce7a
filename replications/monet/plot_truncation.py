"""Test accuracy of the flat Mu-layer's quadratic forms keeping k eigenpairs per class: the top k by |lambda|
against k drawn at random among the 2 (l + 1) that can be non-zero; the dashed line is the full layer."""

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
ks = arrays["ks"]
fig, axes = subplots(1, 1, size=4.2)
ax = axes[0, 0]
for key, label, style in (("top_acc", "top k by |eigenvalue|", "o-"), ("random_acc", "k at random", "x--")):
    values = 100 * arrays[key]
    ax.errorbar(ks, values.mean(0), yerr=values.std(0), fmt=style, ms=4, capsize=2, label=label)
ax.axhline(100 * float(arrays["full_acc"]), color="k", lw=0.8, ls=":", label="full Mu-layer")
ax.set_xscale("log", base=2)
ax.set_xticks(ks, [str(k) for k in ks])
ax.set_xlabel("eigenpairs kept per class")
ax.set_ylabel("test accuracy (%)")
ax.legend(fontsize=8)
save(fig, args.out)
