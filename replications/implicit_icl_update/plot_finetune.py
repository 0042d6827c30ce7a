"""E3: query loss of the implicit update (by context tokens consumed) and of explicit GD fine-tuning of W (by step)."""
import matplotlib.pyplot as plt
import numpy as np

from shared.pipeline.plots import figure_args, save

args, arrays = figure_args()
fig, ax = plt.subplots(figsize=(5, 3.6))
impl, expl = arrays["implicit_by_context"], arrays["explicit_by_step"]
ax.plot(np.arange(len(impl)), impl, label="implicit dW(c_1..c_i): i context tokens")
ax.plot(np.arange(len(expl)), expl, label="explicit GD on W: k steps on all context examples")
ax.axhline(float(arrays["zero_loss"][0]), color="gray", ls=":", label="predict 0")
ax.set_yscale("log")
ax.set_xlabel("i (implicit) or k (explicit)")
ax.set_ylabel("test loss on the query")
ax.legend(fontsize=7)
ax.set_title(args.title, fontsize=9)
save(fig, args.out)
