"""Stage statistics against step: Fourier-pure fraction (Stage II), repulsion sign agreement and Gram distance
(Stage III), one line per (eta, seed), at the steps they were recorded."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, a = figure_args()
fig, axes = subplots(1, 3, size=3.2)
colors = {e: c for e, c in zip(sorted(set(a["etas"].tolist())), ("tab:red", "tab:blue", "tab:green", "tab:purple"))}
keys = (("pure_frac", "Fourier-pure fraction of top units"), ("repulsion", "repulsion sign agreement"),
        ("gram_distance", "||FF^T - (aI + b11^T)|| / ||FF^T||"))
for j, (key, ylabel) in enumerate(keys):
    ax = axes[0, j]
    for i, (eta, seed) in enumerate(zip(a["etas"], a["seeds"])):
        ok = np.isfinite(a[key][:, i])
        label = f"eta={eta:g}" if seed == a["seeds"].min() else None
        ax.plot(a["steps"][ok], a[key][ok, i], "o-", ms=3, color=colors[float(eta)], lw=1, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel, fontsize=8)
axes[0, 0].legend(fontsize=7)
fig.suptitle(args.title, fontsize=9)
save(fig, args.out)
