"""Accuracy along the path from A to pi(B) for the four hidden-unit permutations of the counterexample's B."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
lams = arrays["lambdas"]
fig, axes = subplots(1, 1, size=4.0)
ax = axes[0][0]
for i in range(4):
    ax.plot(lams, arrays[f"perm{i}"], marker=".", label=f"permutation {i}")
ax.set_xlabel("lambda")
ax.set_ylabel("accuracy")
ax.set_ylim(0, 1.02)
ax.legend(fontsize=7)
save(fig, args.out)
