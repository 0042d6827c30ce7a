"""Eigenvalues of each token's transition (restricted to the visited states, scaled by its spectral radius) on the
complex plane, one panel per token, with rays at the multiples of 2 pi / m labelled by the multiple."""
import numpy as np

from shared.pipeline.plots import figure_args, save, subplots

args, arrays = figure_args()
eigvals, m = arrays["eigvals"], int(arrays["m"])
fig, axes = subplots(1, m, size=2.2)
circle = np.exp(1j * np.linspace(0, 2 * np.pi, 400))
for v, (ax, row) in enumerate(zip(axes[0], eigvals)):
    ax.plot(circle.real, circle.imag, color="grey", lw=0.6)
    for k in range(m):
        ray = np.exp(2j * np.pi * k / m)
        ax.plot([0, ray.real], [0, ray.imag], color="grey", lw=0.4, ls=":")
        ax.text(1.15 * ray.real, 1.15 * ray.imag, str(k), fontsize=6, ha="center", va="center", color="grey")
    ax.scatter(row.real, row.imag, s=18, color=f"C{v}", zorder=3)
    ax.set_aspect("equal")
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(f"A for token {v}", fontsize=8)
save(fig, args.out)
