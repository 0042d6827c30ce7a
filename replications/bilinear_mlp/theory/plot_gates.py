"""The toy Boolean task (tutorial 0, App L): the interaction matrix of every output (one pair of inputs each)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
pairs = arrays["pairs"]
rows = [("sym_and", "AND\nsymmetrized"), ("raw_and", "AND\nraw"),
        ("sym_xor", "XOR, no bias\nsymmetrized"), ("sym_xor_bias", "XOR, bias\nsymmetrized")]
fig, axes = subplots(len(rows), len(pairs), size=1.5)
for r, (key, label) in enumerate(rows):
    mats = arrays[key]
    scale = np.abs(mats).max() or 1.0  # one colour scale per row
    ticks = [str(i) for i in range(mats.shape[-1])]
    if key.endswith("_bias"):
        ticks[-1] = "1"  # the constant coordinate of x' = [x, 1]
    for o, (i, j) in enumerate(pairs):
        ax = axes[r, o]
        ax.imshow(mats[o], cmap="RdBu", vmin=-scale, vmax=scale)
        ax.set_xticks(range(len(ticks)), ticks, fontsize=6)
        ax.set_yticks(range(len(ticks)), ticks, fontsize=6)
        mse = float(arrays[f"mse_{key.split('_', 1)[1]}"])
        ax.set_title(f"({i},{j})" + (f"  mse {mse:.1e}" if o == 0 else ""), fontsize=7)
    axes[r, 0].set_ylabel(label, fontsize=8)
for ax in axes[-1]:
    ax.set_xlabel("input coordinate", fontsize=6)
fig.suptitle(f"{args.title}: interaction matrix per output (blue +, red -, scale per row)", fontsize=9)
save(fig, args.out)
