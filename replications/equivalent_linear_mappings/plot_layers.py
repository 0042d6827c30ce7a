"""Layer-wise detached maps: how often the top singular vector decodes to the final prediction, and the stable
rank / d, after each analysed layer."""
from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 2, size=3.6)
layers = a["layers"]
axes[0, 0].plot(layers, a["layer_match"], marker="o", label="trained")
if "init_layer_match" in a:
    axes[0, 0].plot(layers, a["init_layer_match"], marker="o", label="random init")
axes[0, 0].set_ylabel("top singular vector decodes to the prediction")
axes[0, 0].legend(fontsize=7)
axes[0, 1].plot(layers, a["layer_stable_rank"], marker="o")
axes[0, 1].set_ylabel("stable rank / d (median over prompts)")
for ax in axes[0]:
    ax.set_xlabel("layer")
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
