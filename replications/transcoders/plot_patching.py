"""Attribution read from the weights (x) against the patched change of the target pre-activation (y), per
source x target pair: trained transcoders, and the random-weight control."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.4)
for ax, key, title in ((axes[0, 0], "attribution", "trained transcoders"),
                       (axes[0, 1], "random", "random-weight control")):
    ax.plot(arrays[key], arrays["patched"], ".", ms=2, alpha=0.5)
    ax.set_xlabel("attribution from weights (mean per token)")
    ax.set_ylabel("patched change of pre-activation")
    ax.set_title(title, fontsize=8)
save(fig, args.out)
