"""The projective ("linear IGN") model f(x) = g^-1(P g(x)), P = Q Q^T: idempotency f(f(x)) = f(x) on any input
(data, Gaussian and uniform noise, inverted digits), with a control whose matrix is not a projector; how close
data are to being fixed points, against the linear projector of the same rank (uncentered PCA of the training
pixels, i.e. the same model with g = identity); and what f makes of noise (Frechet distance on pixel principal components)."""
import numpy as np
import torch

from shared.io.runtime import generator
from shared.nn.linearizer import Linearizer
from shared.pipeline.run import write_metrics
from shared.train.chunked import chunked

from .common import as_float, relative_errors, spread, start_analysis, summary
from .quality import PixelPCA, frechet


def inputs(x_test, shape, count, rng):
    """The input families idempotency is checked on; only the first is data."""
    data = spread(x_test, count)
    return {"data": data, "gaussian": torch.randn(len(data), *shape, generator=rng),
            "uniform": torch.rand(len(data), *shape, generator=rng), "inverted": 1.0 - data}


def main():
    run, base, spec, meta, data, shape, scale = start_analysis()
    args, p, device = run.args, run.params, run.device  # p: {"inputs", "seed", "control_scale", "components", "grid", "device"}
    x_train, x_test = as_float(data["x_train"], scale), as_float(data["x_test"], scale)
    families = inputs(x_test, shape, p["inputs"], generator(p["seed"]))
    perturbation = torch.randn(base.n, base.n, generator=run.generator(p["seed"], "control")) / base.n**0.5

    metrics, arrays = {}, {}
    for name, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        model = base.to(dtype)
        f = model.linearizer()
        control = Linearizer(f.matrix + p["control_scale"] * perturbation.to(device, dtype), model.space)
        p_err = (f.matrix @ f.matrix - f.matrix).norm() / f.matrix.norm()
        metrics[f"{name}.projector_residual"] = float(p_err)
        with torch.no_grad():
            for family, x in families.items():
                x = x.to(device, dtype)
                once = f(x)
                metrics |= {f"{name}.idempotency.{family}.{k}": v
                            for k, v in summary(relative_errors(f(once), once), name).items()}
                ctrl = control(x)
                metrics |= {f"{name}.control.{family}.{k}": v
                            for k, v in summary(relative_errors(control(ctrl), ctrl), name).items()}
                if name == "fp32":
                    arrays |= {f"{family}_input": x[: p["grid"]].cpu().numpy(), f"{family}_once": once[: p["grid"]].cpu().numpy(),
                               f"{family}_twice": f(once)[: p["grid"]].cpu().numpy()}
        medians = lambda kind: [metrics[f"{name}.{kind}.{family}.median"] for family in families]
        metrics[f"{name}.idempotency.worst_median"] = max(medians("idempotency"))
        metrics[f"{name}.control.best_median"] = min(medians("control"))
    model = base.to(torch.float32)

    # data as fixed points, against the linear projector of the same rank (g = identity)
    with torch.no_grad():
        recon = chunked(model.linearizer(), x_test.to(device), 500, "fixed_point")  # a smoke run: 3 chunks
        flat_train = x_train.reshape(len(x_train), -1).double()
        basis = torch.linalg.svd(flat_train, full_matrices=False)[2][: spec["model"]["rank"]].T
        linear = (x_test.reshape(len(x_test), -1).double() @ basis @ basis.T).reshape(x_test.shape)
        metrics["fixed_point.linearizer"] = float(np.median(relative_errors(recon, x_test)))
        metrics["fixed_point.linear_projector"] = float(np.median(relative_errors(linear, x_test)))
        features = PixelPCA(x_train.numpy(), p["components"])
        noise_image = model.linearizer()(families["gaussian"].to(device)).cpu().numpy()
        metrics["noise_projection.frechet"] = frechet(features(noise_image), features(x_test.numpy()))
        metrics["noise_projection.frechet_of_noise"] = frechet(features(families["gaussian"].numpy()), features(x_test.numpy()))
        metrics["fixed_point.ratio_to_linear"] = metrics["fixed_point.linearizer"] / metrics["fixed_point.linear_projector"]
        metrics["noise_projection.ratio"] = metrics["noise_projection.frechet"] / metrics["noise_projection.frechet_of_noise"]
    arrays["shape"] = np.array(shape)
    info = {"dataset": spec["dataset"], "rank": spec["model"]["rank"], "inputs": p["inputs"], "seed": p["seed"]}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    for k, v in metrics.items():
        print(f"{k:45s} {v:.4g}")


if __name__ == "__main__":
    main()
