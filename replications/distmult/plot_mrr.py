"""Filtered test MRR per graph (groups) and model (bars)."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
graphs, models, mrr = list(arrays["graphs"]), list(arrays["models"]), arrays["mrr"]
fig, axes = subplots(1, 1, size=4.5)
ax = axes[0][0]
width = 0.8 / len(models)
for j, model in enumerate(models):
    ax.bar(np.arange(len(graphs)) + j * width, np.nan_to_num(mrr[:, j]), width, label=str(model))
ax.set_xticks(np.arange(len(graphs)) + 0.4 - width / 2, graphs)
ax.set_xlabel("knowledge graph")
ax.set_ylabel("filtered test MRR")
ax.set_ylim(0, 1)
ax.legend(fontsize=6, ncol=2)
save(fig, args.out)
