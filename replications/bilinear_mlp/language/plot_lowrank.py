"""Fig 9A/B: active-token correlation of an output feature with its top-k eigen approximation (median with the
interquartile band, and the mean the claims score), and the distribution of per-feature correlations at k = 2."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
ks, corrs = arrays["ks"], arrays["corrs"]
fig, axes = subplots(1, 2, size=3.6)
ax = axes[0, 0]
# The band is the interquartile range of the features, so the line inside it is their median. The claims (L4-*)
# score the mean, drawn apart: a few features with negative correlation pull it down, below the 25% quantile where
# most features are already well approximated (k = 3 here), so a mean line in the band would sit outside it.
ax.fill_between(ks, np.quantile(corrs, 0.25, axis=0), np.quantile(corrs, 0.75, axis=0), alpha=0.3,
                label="features, 25-75%")
ax.plot(ks, np.median(corrs, axis=0), marker=".", label="median over features")
ax.plot(ks, corrs.mean(0), color="C3", ls=":", marker="x", ms=4, label="mean over features (claims L4)")
ax.axhline(0.65, color="gray", ls="--", lw=0.8, label="paper, k = 1 (~0.65)")
ax.set_xscale("log", base=2)
ax.set_xlabel("eigenvectors kept (k)")
ax.set_ylabel("correlation (active tokens)")
ax.legend(fontsize=7)
ax = axes[0, 1]
k2 = corrs[:, list(ks).index(2)]
ax.hist(k2, bins=np.linspace(min(0, k2.min()), 1, 26))
ax.axvline(0.75, color="gray", ls="--", lw=0.8)
ax.set_xlabel("correlation at k = 2")
ax.set_ylabel("output features")
ax.set_title(f"{(k2 > 0.75).mean():.0%} above 0.75 ({len(k2)} features)", fontsize=8)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
