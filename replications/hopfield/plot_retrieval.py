"""Left: the fraction of half-masked queries within 0.1 of their pattern after one update, against beta, per number
of stored MNIST images. Right: at the main N, the regime of the fixed point reached from each stored image."""
from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
fig, axes = subplots(1, 2, size=3.6)
betas = arrays["betas"]
left, right = axes[0, 0], axes[0, 1]
for n in arrays["n_stored"]:
    left.plot(betas, arrays[f"close_n{int(n)}"], "o-", ms=3, label=f"N = {int(n)}")
left.set_xscale("log", base=2)
left.set_xlabel("beta")
left.set_ylabel("retrieved in one update")
left.legend(fontsize=7)
for key, label in (("global", "global average"), ("metastable", "metastable"), ("single", "single pattern")):
    right.plot(betas, arrays[f"regime_{key}"], "o-", ms=3, label=label)
right.set_xscale("log", base=2)
right.set_xlabel("beta")
right.set_ylabel("fraction of fixed points")
right.legend(fontsize=7)
save(fig, args.out)
