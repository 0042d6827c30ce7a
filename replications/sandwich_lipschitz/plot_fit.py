"""The square wave and the first seed's fits: sandwich and orthogonal networks at each gamma, and the plain MLP."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
names = [str(n) for n in arrays["names"]]
gammas = sorted({n.split("-")[1] for n in names if n.startswith("sandwich")}, key=lambda g: float(g[1:]))
fig, axes = subplots(1, len(gammas), size=3.0)
for ax, g in zip(axes[0], gammas):
    ax.plot(arrays["x"], arrays["y"], color="0.6", lw=3, label="target")
    for kind, colour in (("sandwich", "C0"), ("orthogonal", "C1"), ("plain", "C2")):
        for i, n in enumerate(names):
            if n.startswith(kind) and (kind == "plain" or n.split("-")[1] == g):
                ax.plot(arrays["x"], arrays["curves"][i], color=colour, lw=1.2, label=kind)
    ax.set_title(f"gamma = {g[1:]}")
    ax.set_xlabel("x")
    ax.set_ylabel("f(x)")
axes[0][0].legend(fontsize=7)
save(fig, args.out)
