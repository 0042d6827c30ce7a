"""Exactness of the Linearizer's algebra on a trained one-step model: linearity under the induced operations,
inversion, composition, powers, the adjoint, the pseudo-inverse and the SVD, each with its relative error per
input. The controls must fail the same checks: the same f with ordinary + and *, and a map between the same
spaces that is not a Linearizer (tanh between g_noise and A).

f is the one-step generator (Euler collapse, noise -> data); rank-deficient checks use f_t = the model's step at
time t (A_t has rank <= r).
"""
import torch

from shared.io.runtime import generator
from shared.nn.linearizer import Linearizer
from shared.pipeline.run import write_metrics

from .common import as_float, relative_errors, spread, start_analysis, summary
from .sampling import collapse, one_step_generator


def scalar_errors(a, b):
    return ((a - b).abs() / torch.maximum(a.abs(), b.abs()).clamp_min(1e-300)).cpu().numpy()


def checks(model, noise, more_noise, x, coeffs, steps, t):
    """{check: relative errors per input}; inputs are already in the model's dtype and device."""
    f = one_step_generator(model, collapse(model, steps, "euler"))
    nx, dy = model.noise_space, model.data_space
    c1, c2 = coeffs
    col = lambda c: c.reshape(-1, *[1] * (noise.dim() - 1))
    out = {}
    out["superposition"] = relative_errors(f(nx.add(nx.scale(c1, noise), nx.scale(c2, more_noise))),
                                           dy.add(dy.scale(c1, f(noise)), dy.scale(c2, f(more_noise))))
    out["homogeneity"] = relative_errors(f(nx.scale(c1, noise)), dy.scale(c1, f(noise)))
    out["zero_to_zero"] = relative_errors(f(nx.zero(1)), dy.zero(1))
    out["control_euclidean"] = relative_errors(f(col(c1) * noise + col(c2) * more_noise),
                                               col(c1) * f(noise) + col(c2) * f(more_noise))
    bent = lambda v: dy.decode(torch.tanh(nx.encode(v)) @ f.matrix.T)  # same g's and matrix, not a Linearizer
    out["control_not_linearizer"] = relative_errors(bent(nx.add(nx.scale(c1, noise), nx.scale(c2, more_noise))),
                                                    dy.add(dy.scale(c1, bent(noise)), dy.scale(c2, bent(more_noise))))
    out["inversion_data"] = relative_errors(dy.decode(dy.encode(x)), x)
    out["inversion_noise"] = relative_errors(nx.decode(nx.encode(noise)), noise)

    step = model.step(t)  # noise -> data, rank <= r
    later = Linearizer(model.time_matrix.matrix(1 - t), dy, dy)  # data -> data
    out["composition"] = relative_errors(later.compose(step)(noise), later(step(noise)))
    out["power"] = relative_errors(later.power(3)(x), later(later(later(x))))
    adjoint = step.transpose()
    out["adjoint"] = scalar_errors(dy.inner(step(noise), x), nx.inner(noise, adjoint(x)))
    pinv = step.pinv()
    out["penrose_1"] = relative_errors(step(pinv(step(noise))), step(noise))
    out["penrose_2"] = relative_errors(pinv(step(pinv(x))), pinv(x))
    out["penrose_3"] = scalar_errors(dy.inner(step(pinv(x)), x[torch.arange(len(x)).roll(1)]),
                                     dy.inner(x, step(pinv(x[torch.arange(len(x)).roll(1)]))))
    out["penrose_4"] = scalar_errors(nx.inner(pinv(step(noise)), more_noise), nx.inner(noise, pinv(step(more_noise))))
    left, values, right = step.svd()
    rank = model.time_matrix.rank
    out["svd"] = relative_errors(step(right[:rank]), dy.scale(values[:rank], left[:rank]))
    return out


def main():
    run, base, spec, meta, data, shape, scale = start_analysis()
    args, p, device = run.args, run.params, run.device  # p: {"model", "inputs", "steps", "t", "seed", "coefficient", "device"}
    rng = generator(p["seed"])
    noise, more_noise = (torch.randn(p["inputs"], *shape, generator=rng) for _ in range(2))
    coeffs = ((torch.rand(2, p["inputs"], generator=rng) * 2 - 1) * p["coefficient"]).unbind(0)
    x = as_float(spread(data["x_test"], p["inputs"]), scale)

    metrics, arrays = {}, {}
    for name, dtype in (("fp64", torch.float64), ("fp32", torch.float32)):
        model = base.to(dtype)
        cast = lambda v: v.to(device, dtype)
        with torch.no_grad():
            errors = checks(model, cast(noise), cast(more_noise), cast(x), tuple(map(cast, coeffs)), p["steps"], p["t"])
        for check, values in errors.items():
            arrays[f"{name}.{check}"] = values
            metrics |= {f"{name}.{check}.{k}": v for k, v in summary(values, name).items()}
    info = {"model": p["model"], "dataset": spec["dataset"], "inputs": p["inputs"], "steps": p["steps"], "t": p["t"],
            "seed": p["seed"]}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    for k, v in metrics.items():
        print(f"{k:40s} {v:.3e}")


if __name__ == "__main__":
    main()
