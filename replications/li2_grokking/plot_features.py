"""Learned features of one grokked member: each unit's Fourier purity against its norm ||u|| ||v|| ||out||,
coloured by whether u, v and out peak on the same frequency pair."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 2, size=4.0)
norm = np.maximum(a["unit_norm"], 1e-12)
same = a["unit_same"] > 0.5
axes[0, 0].scatter(norm[same], a["unit_purity"][same], s=6, c="tab:blue", label="u, v, out on one frequency")
axes[0, 0].scatter(norm[~same], a["unit_purity"][~same], s=6, c="tab:gray", label="not aligned")
axes[0, 0].axhline(0.9, color="k", lw=0.6, ls="--")
axes[0, 0].set_xscale("log")
axes[0, 0].set_xlabel("unit norm ||u|| ||v|| ||out||")
axes[0, 0].set_ylabel("Fourier purity of [u; v]")
axes[0, 0].legend(fontsize=7)
top = np.argsort(-norm)[: max(1, int((np.cumsum(np.sort(norm)[::-1] ** 2) / (norm ** 2).sum() < 0.9).sum() + 1))]
freq = a["unit_component"][top][a["unit_purity"][top] >= 0.9]
axes[0, 1].hist(freq, bins=np.arange(freq.max() + 2 if len(freq) else 2) - 0.5, color="tab:blue")
axes[0, 1].set_xlabel("frequency k of the pure top units")
axes[0, 1].set_ylabel("units")
fig.suptitle(f"{args.title} (eta = {float(a['show_eta']):g}, seed 0)", fontsize=9)
save(fig, args.out)
