"""One-step generation: held-out data, samples from 100 Euler steps, the one collapsed matrix B, 100 RK4 steps, the
released code's one-step 'rk' matrix and the A = I control, then held-out images encoded through pinv(B) and
regenerated. One row each, the first 16 elements."""
from shared.pipeline.plots import figure_args, save, subplots

from .images import as_images, show_row

args, arrays = figure_args()
rows = [
    ("data", "held-out data"),
    ("many_steps", "100 Euler steps"),
    ("one_step", "one step (B)"),
    ("rk4", "100 RK4 steps"),
    ("released_rk", "released 'rk' B\n(defect)"),
    ("identity_control", "control A = I"),
    ("inversion_input", "held-out input"),
    ("inversion_output", "regenerated\nf(pinv f(input))"),
]
rows = [(key, label) for key, label in rows if key in arrays]
fig, axes = subplots(len(rows), 16, size=0.62)
for ax_row, (key, label) in zip(axes, rows):
    show_row(ax_row, as_images(arrays[key][:16], arrays.get("shape")), label)
fig.suptitle(f"{args.title}: samples per sampler (images clipped to [0, 1])", fontsize=9)
save(fig, args.out)
