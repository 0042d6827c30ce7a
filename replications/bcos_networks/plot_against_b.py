"""Accuracy, alignment and localisation of the B-cos networks against B, the ReLU baseline as a dashed line."""
from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 3, size=3.0)
panels = [("test accuracy", a["acc"], a["relu"][0], "ReLU net"),
          ("alignment |cos(W_y(x), x)|", a["align"], a["relu"][1], "ReLU net (gradient)"),
          ("localisation (grid pointing)", a["loc"], a["relu"][2], "ReLU net, gradient x input")]
for ax, (label, values, relu, relu_label) in zip(axes[0], panels):
    ax.plot(a["b_values"], values, "o-", color="tab:blue", label="B-cos")
    ax.axhline(relu, color="tab:gray", ls="--", label=relu_label)
    ax.set_xlabel("B")
    ax.set_ylabel(label)
    ax.legend(fontsize=7)
axes[0][2].axhline(float(a["chance"]), color="k", ls=":", label="chance")
axes[0][2].legend(fontsize=7)
save(fig, args.out)
