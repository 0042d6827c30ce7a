"""Exact properties the code must satisfy (identity claims), in float64:

- one_step_gd_rel_err: a 1-layer sparse model with Q = -eta I predicts eta * x_q^T (1/N) sum_i y_i x_i, one step of
  GD from w = 0 (Ahn et al. 2023 / the dossier 2.1: Gamma = -Q^T);
- hessian_fd_rel_err: the diagnostics' exact Hessian diagonal of the 3-layer model vs central finite differences
  of the gradient;
- smoothness_fd_rel_err: the directional smoothness vs a central second difference of the loss.
"""
import torch

from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run, write_metrics
from shared.train import diagnostics as diag

from .common import loss_fn, sampler
from .model import build


def main():
    run = start_run("metrics", "arrays")
    p = run.params
    gen = run.generator(0, "identity")
    z, y = sampler(p["d"], p["n"], "normal", dtype=torch.float64)(p["identity_prompts"], gen)
    eta = 0.7
    one = build({"d": p["d"], "layers": 1, "init_std": p["init_std"]}).double()
    with torch.no_grad():
        one.layers[0].key_query.copy_(-eta * torch.eye(p["d"], dtype=torch.float64))
        pred = one(z)
    x, labels = z[:, :-1, :-1], z[:, :-1, -1]
    gd = eta * torch.einsum("bd,bd->b", z[:, -1, :-1], torch.einsum("bn,bnd->bd", labels, x) / p["n"])
    one_step = float((pred - gd).abs().max() / gd.abs().max())

    seed_everything(0)
    model = build({"d": p["d"], "layers": 3, "init_std": 0.3}).double()
    batch = (z, y)
    hdiag = diag.hessian_diagonal(model, loss_fn(model, batch))
    params = diag.trainable(model)
    h, fd, i = 1e-5, [], 0
    for prm in params:
        for k in range(prm.numel()):
            grads = []
            for sign in (1, -1):
                with torch.no_grad():
                    prm.view(-1)[k] += sign * h
                grads.append(diag.gradient(model, loss_fn, batch)[i])
                with torch.no_grad():
                    prm.view(-1)[k] -= sign * h
            fd.append((grads[0] - grads[1]) / (2 * h))
            i += 1
    fd = torch.stack(fd)
    hess_err = float((hdiag - fd).abs().max() / hdiag.abs().max())

    u = torch.randn(hdiag.numel(), generator=gen, dtype=torch.float64)
    u = u / u.norm()
    ds = diag.directional_smoothness(model, loss_fn, batch, u)
    theta = diag.flat_parameters(model)

    def loss_at(vec):
        torch.nn.utils.vector_to_parameters(vec, params)
        with torch.no_grad():
            return float(loss_fn(model, batch))
    e = 1e-4
    second = (loss_at(theta + e * u) - 2 * loss_at(theta) + loss_at(theta - e * u)) / e ** 2
    loss_at(theta)
    metrics = {"one_step_gd_rel_err": one_step, "hessian_fd_rel_err": hess_err,
               "smoothness_fd_rel_err": abs(ds - second) / abs(second), "robust_condition_number": diag.robust_condition_number(hdiag)}
    write_metrics(run.args.metrics, metrics, info={"dtype": "float64", "fd_step_hessian": h, "fd_step_smoothness": e},
                  arrays={"hessian_diag": hdiag.numpy(), "fd": fd.numpy()}, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
