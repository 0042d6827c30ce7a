"""CE loss recovered against L0 for transcoders (MLP replaced) and SAEs (MLP output replaced), per analysed layer."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.4)
for ax, side, layer in zip(axes[0], ("a", "b"), arrays["layers"]):
    for kind, color in (("transcoder", "C0"), ("sae", "C1")):
        l0, rec = arrays[f"{side}_{kind}_l0"], arrays[f"{side}_{kind}_recovered"]
        order = l0.argsort()
        ax.plot(l0[order], rec[order], "o-", color=color, label=kind, ms=4)
    ax.set_xscale("log")
    ax.set_xlabel("L0 (active features per token)")
    ax.set_ylabel("CE loss recovered")
    ax.set_title(f"layer {int(layer)}", fontsize=8)
    ax.legend(fontsize=7)
save(fig, args.out)
