"""The linear interpreter of the x2 super-resolution CNN (the paper's SR setting, scaled down).

A_x maps the low-res image to the high-res output (with b_x). The paper reads its singular vectors as a
wavelet-type basis; the check here is the dossier's localisation: the share of a vector's energy within a 7x7
window around its peak, for the top-k left singular vectors (high-res images), against random vectors. The columns
(impulse responses) are localised by construction (receptive field) and reported as information.
Each metric is the mean over the checkpoint's seeds, the replay error the worst seed; figures show the first seed.
"""

import numpy as np
import torch
import torch.nn.functional as F

from shared.nn.dynamic_linear import dynamic_linear_map
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import psnr, rel_err

from .analyze_cnn import spread
from .common import load_data, over_seeds, seeds_of
from .train_sr import downsample

WINDOW = 7
IDENTITIES = ("replay_rel_err",)  # worst seed, not mean


def localisation(vectors, channels, side):
    """Share of each vector's energy (summed over channels) within the WINDOW x WINDOW box around its peak: (M,)."""
    energy = vectors.reshape(-1, channels, side, side).pow(2).sum(1)
    boxes = F.avg_pool2d(energy[:, None], WINDOW, stride=1, padding=WINDOW // 2, count_include_pad=True)
    peak = energy.flatten(1).argmax(1)
    return boxes.flatten(1).gather(1, peak[:, None]).squeeze(1) * WINDOW**2 / energy.flatten(1).sum(1)


def measure(run, net, seed, spec, lr_test, hr_test, p):
    """The metrics of one seed's SR net, and the arrays its figure draws."""
    c, side = spec["in_channels"], spec["size"]
    net = net.to(run.device).eval()
    with torch.no_grad():
        out = net(lr_test).clamp(0, 1)
        upsampled = F.interpolate(lr_test.view(-1, c, side // 2, side // 2), scale_factor=2, mode="bilinear",
                                  align_corners=False).flatten(1).clamp(0, 1)

    x = lr_test[spread(len(lr_test), p["images"])].double()
    lin = dynamic_linear_map(net, x)  # weight (N, C*side^2, C*(side/2)^2)
    u, s, _ = torch.linalg.svd(lin.weight)
    k = p["top"]
    top = u[:, :, :k].transpose(1, 2).reshape(-1, u.shape[1])  # (N*k, C*side^2)
    columns = lin.weight.transpose(1, 2).reshape(-1, lin.weight.shape[1])
    columns = columns[columns.norm(dim=1) > 0]
    noise = torch.randn(top.shape, generator=run.generator(seed, "random_vectors"), dtype=torch.float64)
    metrics = {
        "replay_rel_err": rel_err((lin.weight @ x.unsqueeze(-1)).squeeze(-1) + lin.bias, lin.output, per_sample=True).max().item(),
        "localised_basis": localisation(top, c, side).median().item(),
        "random_localisation": localisation(noise.to(run.device), c, side).median().item(),
        "column_localisation": localisation(columns, c, side).median().item(),
        "psnr": psnr(out, hr_test),
        "psnr_bilinear_upsampling": psnr(upsampled, hr_test),
    }
    metrics["psnr_gain"] = metrics["psnr"] - metrics["psnr_bilinear_upsampling"]
    arrays = {"lr": x[0].cpu().numpy(), "sr": lin.output[0].cpu().numpy(), "bias": lin.bias[0].cpu().numpy(),
              "top": u[0, :, :k].T.cpu().numpy(), "singular_values": s[0].cpu().numpy(),
              "columns": lin.weight[0][:, spread(lin.weight.shape[2], 4)].T.cpu().numpy(),
              "shape": np.array([c, side])}
    return metrics, arrays, len(x)


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args, p = run.args, run.params
    models, specs, meta = load_models(args.checkpoint)
    seeds = seeds_of(specs)
    spec = specs[f"sr_s{seeds[0]}"]
    data = load_data(args.data)
    hr_test = data["x_test"].to(run.device)
    lr_test = downsample(hr_test, spec["in_channels"], spec["size"])
    per_seed = [measure(run, models[f"sr_s{s}"], s, spec, lr_test, hr_test, p) for s in seeds]
    metrics = over_seeds([m for m, _, _ in per_seed], worst=IDENTITIES)
    info = {"images": per_seed[0][2], "top": p["top"], "window": WINDOW, "dtype": "float64",
            "random_expectation": WINDOW**2 / spec["size"]**2, "figures_seed": seeds[0],
            "per_seed": {str(s): m for s, (m, _, _) in zip(seeds, per_seed)}}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=per_seed[0][1], arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
