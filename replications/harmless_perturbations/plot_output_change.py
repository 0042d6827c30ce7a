"""Relative logit change against the perturbation's norm: flat (float64 rounding) for harmless perturbations,
growing for random ones; the adversarial points change the decision at a far smaller norm."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.6)
ax = axes[0][0]
floor = 1e-18  # a change of exactly 0 cannot be drawn on a log axis
ax.plot(arrays["alphas"], np.maximum(arrays["harmless_f64_median"], floor), "o-", label="harmless (null(W1))")
ax.plot(arrays["alphas"], np.maximum(arrays["random_f64_median"], floor), "s-", label="random direction")
ax.plot(arrays["adv_norm"], np.maximum(arrays["adv_change"], floor), "^-", label="PGD (L-inf grid)")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("||delta|| / ||x||")
ax.set_ylabel("median max|logit change| / max|logit|")
ax.legend(fontsize=7)
ax = axes[0][1]
ax.plot(arrays["alphas"], arrays["harmless_f32_kept"], "o-", label="harmless")
ax.plot(arrays["alphas"], arrays["random_f32_kept"], "s-", label="random")
ax.set_xscale("log")
ax.set_ylim(-0.05, 1.05)
ax.set_xlabel("||delta|| / ||x||")
ax.set_ylabel("share of predictions kept (float32)")
ax.legend(fontsize=7)
save(fig, args.out)
