"""Cumulative averaging: barrier (train loss, into A) with layers 1..k averaged (shallow -> deep) or the last k
(deep -> shallow), against k; the dashed lines bound the middle third."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
k = arrays["k"]
n, third = int(k[-1]), int(arrays["third"])
fig, axes = subplots(1, 2, size=3.6)
ax = axes[0, 0]
ax.plot(k, arrays["shallow_train_loss"], "o-", label="shallow -> deep (layers 1..k)")
ax.plot(k, arrays["deep_train_loss"], "s-", label="deep -> shallow (last k layers)")
ax.set_xlabel("k (layers averaged)")
ax.set_ylabel("barrier (nats, train loss)")
ax.legend(fontsize=7)
ax = axes[0, 1]
ax.bar(np.arange(1, n + 1), arrays["increments"], color=["C0" if third < j <= n - third else "C7"
                                                         for j in range(1, n + 1)])
for edge in (third + 0.5, n - third + 0.5):
    ax.axvline(edge, ls="--", c="k", lw=0.8)
ax.set_xlabel("layer j (1 = first)")
ax.set_ylabel("increment of layer j (mean of both orders)")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
