"""Test risk against n: the trained LSA, one-step GD with eta*, ridge (lambda = sigma^2), least squares, and the
theoretical minimum d (1 - eta*) + sigma^2 of one-step GD."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
rows = arrays["rows"]  # n, seed, lsa, gd*, ridge, ols, theory, analytic
fig, axes = subplots(1, 1, size=4.2)
ax = axes[0, 0]
ns = np.unique(rows[:, 0])


def mean(col):
    return [rows[rows[:, 0] == n, col].mean() for n in ns]


ax.plot(ns, mean(6), "k-", lw=1, label="theory d(1-eta*)+sigma^2")
for col, label, style in ((2, "trained LSA", "o"), (3, "one-step GD (eta*)", "x"), (4, "ridge (lambda=sigma^2)", "s"),
                          (5, "least squares", "^")):
    ax.plot(ns, mean(col), style + "--", ms=5, lw=0.8, label=label)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("context length n")
ax.set_ylabel("test risk E(y_hat - y_q)^2")
ax.legend(fontsize=7)
ax.set_title(args.title, fontsize=9)
save(fig, args.out)
