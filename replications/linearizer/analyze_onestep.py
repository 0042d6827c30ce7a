"""One-step sampling of a trained one-step Linearizer against step-by-step solving, sample quality, inversion
through the pseudo-inverse, and the SVD of the one-step generator.

Every comparison uses the same noise. fp64 copies of the model test the algebra (should agree to ~1e-12);
fp32 is what a user runs (TF32 off, which would otherwise change matmul precision on a GPU).
"""
import numpy as np
import torch

from shared.io.runtime import generator
from shared.pipeline.run import write_metrics
from shared.stats import psnr

from .common import as_float, relative_errors, spread, start_analysis, summary
from .quality import PixelPCA, energy_distance, frechet
from .sampling import collapse, many_steps, one_step_generator

PRECISIONS = {"fp32": torch.float32, "fp64": torch.float64}


def agreement(model, eps, steps, precision):
    """{method: one-step output vs the iterative solver it collapses}; released_rk is compared with iterative
    RK4, as the released code does."""
    out, samples = {}, {}
    for method, solver in (("euler", "euler"), ("rk4", "rk4"), ("released_rk", "rk4")):
        one = one_step_generator(model, collapse(model, steps, method))(eps)
        many = samples.get(solver)
        if many is None:
            many = samples[solver] = many_steps(model, eps, steps, solver)
        errors = relative_errors(one, many)
        out[method] = {"psnr": psnr(one.double(), many.double()), **summary(errors, precision)}
        samples[f"one_{method}"] = one
    return out, samples


def inversion(model, x, steps, method):
    """x -> noise through the pseudo-inverse of the one-step generator, then back: g_data^-1(B B^+ g_data(x))."""
    f = one_step_generator(model, collapse(model, steps, method))
    noise = f.pinv()(x)
    recon = f(noise)
    singular = torch.linalg.svdvals(f.matrix.double())
    return recon, {"psnr": psnr(recon.double(), x.double()), "cond": float(singular[0] / singular[-1])}


def main():
    run, base, spec, meta, data, shape, scale = start_analysis()
    args, p, device = run.args, run.params, run.device
    # p: the analysis config (steps, released_steps, samples, invert, seed, singular, grid, quality, ...)
    eps = torch.randn(p["samples"], *shape, generator=generator(p["seed"]))
    x_test = as_float(data["x_test"], scale)

    metrics, arrays = {}, {}
    for name, dtype in PRECISIONS.items():
        model = base.to(dtype)
        result, samples = agreement(model, eps.to(device, dtype), p["steps"], name)
        for method, values in result.items():
            metrics |= {f"{name}.{method}.{k}": v for k, v in values.items()}
        x = spread(x_test, p["invert"]).to(device, dtype)
        recon, inv = inversion(model, x, p["steps"], "euler")
        metrics |= {f"{name}.inversion.{k}": v for k, v in inv.items()}
        _, released = inversion(model, x, p["released_steps"], "released_rk")
        metrics[f"{name}.inversion_released.psnr"] = released["psnr"]
        if name == "fp32":
            fp32_samples = {k: v.cpu().numpy() for k, v in samples.items()}
            control = model.data_space.decode(model.noise_space.encode(eps.to(device, dtype)))  # A = I
            arrays |= {"inversion_input": x.cpu().numpy(), "inversion_output": recon.cpu().numpy()}
    model = base.to(torch.float32)

    # quality of the fp32 samples, against held-out data; the floor compares training data with held-out data
    test, train = x_test.numpy(), as_float(data["x_train"][: len(x_test)], scale).numpy()
    one, many, ctrl = fp32_samples["one_euler"], fp32_samples["euler"], control.cpu().numpy()
    if p["quality"] == "energy":
        distance = lambda a, b: energy_distance(a[: p["energy_points"]], b[: p["energy_points"]])
        gaussian = np.random.default_rng(p["seed"]).multivariate_normal(test.mean(0), np.cov(test, rowvar=False), len(test))
        metrics["quality.gaussian_fit"] = distance(gaussian, test)
        arrays["gaussian_fit"] = gaussian
    else:
        features = PixelPCA(as_float(data["x_train"], scale).numpy(), p["components"])
        distance = lambda a, b: frechet(features(a), features(b))
    metrics |= {"quality.one_step": distance(one, test), "quality.many_steps": distance(many, test),
                "quality.identity_control": distance(ctrl, test), "quality.data_floor": distance(train, test)}
    metrics["quality.relative_gap"] = abs(metrics["quality.one_step"] - metrics["quality.many_steps"]) / metrics["quality.many_steps"]
    metrics["quality.control_ratio"] = metrics["quality.one_step"] / metrics["quality.identity_control"]

    # singular vectors of the one-step generator (fp64): g_data^-1(+-c u_i), c = the median latent norm of data
    f = one_step_generator(base.to(torch.float64), collapse(base.to(torch.float64), p["steps"], "euler"))
    u, values, _ = torch.linalg.svd(f.matrix)
    c = float(f.space_out.encode(spread(x_test, 256).to(device, torch.float64)).norm(dim=1).median())
    k = p["singular"]
    arrays |= {"singular_plus": f.space_out.decode(c * u[:, :k].T).cpu().numpy(),
               "singular_minus": f.space_out.decode(-c * u[:, :k].T).cpu().numpy(),
               "singular_values": values.cpu().numpy(), "zero": f.space_out.zero(1).cpu().numpy()}
    # was A_t learned? An unlearned A_t leaves B ~ I / T: every singular value alike (top_fraction ~ k / n, cond ~ 1);
    # a learned rank-r A_t keeps r latent directions at order 1 while the rest shrink by 1 / T
    k = min(k, len(values))  # the 2-D toy has 2
    metrics["singular.top_fraction"] = float((values[:k] ** 2).sum() / (values**2).sum())
    metrics["singular.chance_fraction"] = k / len(values)
    metrics["singular.top_over_median"] = float(values[k - 1] / values.median())
    metrics["singular.cond"] = float(values[0] / values[-1])
    base.to(torch.float32)

    arrays |= {"data": spread(x_test, p["grid"]).numpy(), "one_step": one[: p["grid"]], "many_steps": many[: p["grid"]],
               "identity_control": ctrl[: p["grid"]], "released_rk": fp32_samples["one_released_rk"][: p["grid"]],
               "rk4": fp32_samples["rk4"][: p["grid"]], "shape": np.array(shape)}
    if p["quality"] == "energy":  # 2-D points: every point, for the scatter plots
        arrays |= {"data": test, "one_step": one, "many_steps": many, "identity_control": ctrl}
    info = {"dataset": spec["dataset"], "steps": p["steps"], "samples": p["samples"], "seed": p["seed"]}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print({k: round(v, 6) if isinstance(v, float) else v for k, v in metrics.items()})


if __name__ == "__main__":
    main()
