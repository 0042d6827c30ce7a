"""Fig 7: accuracy and 'misclassified as the target digit' vs mask strength, for the pseudo-inverse mask (noise
model) and the edge mask (clean model), each against its random baseline; and one example mask."""
from shared.pipeline.plots import figure_args, save, show_vector, subplots

args, arrays = figure_args()
s = arrays["strengths"]
fig, axes = subplots(2, 3, size=2.6)
for row, kind in enumerate(("pinv", "edge")):
    curve = arrays[f"{kind}_curve"]
    ax = axes[row, 0]
    ax.plot(s, curve[:, 0], marker=".", label="mask")
    ax.plot(s, curve[:, 2], marker=".", label="random")
    ax.set_ylabel(f"{kind}: accuracy (%)", fontsize=7)
    ax.legend(fontsize=6)
    ax = axes[row, 1]
    ax.plot(s, curve[:, 1], marker=".", label="mask")
    ax.plot(s, curve[:, 3], marker=".", label="random")
    ax.set_ylabel("pred = target (%)", fontsize=7)
    for ax in axes[row, :2]:
        ax.set_xlabel("mask std", fontsize=7)
        ax.tick_params(labelsize=6)
    show_vector(axes[row, 2], arrays[f"{kind}_example"], title=f"{kind} mask, digit 3, eigvec 2")
save(fig, args.out)
