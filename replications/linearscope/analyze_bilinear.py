"""This suite's extension: a bilinear MLP has no gates, so its "interpreter" is exact algebra.

logit_c(x) = sum_h U[c, h] (L x)_h (R x)_h = x^T B_c x with B_c = sum_h U[c, h] L_h (x) R_h (a quadratic form).
Freezing the left half at x (shared.nn.dynamic_linear) gives the exact linear map W(x) z = x^T B_c z: its row for
class c is B_c^T x, it has no bias, and W(x) x = f(x). Unlike a ReLU network, this frozen map is not the Jacobian:
the Jacobian is (B_c + B_c^T) x, so the frozen map is half of it only on the symmetric part (a control).
Each metric is the mean over the checkpoint's seeds, an identity's error the worst seed; figures show the first seed.
"""
import copy

import numpy as np
import torch

from shared.nn.dynamic_linear import dynamic_linear_map
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import rel_err
from shared.train.supervised import evaluate

from .analyze_cnn import jacobian, spread
from .common import load_data, over_seeds, seeds_of

IDENTITIES = ("quadratic_rel_err", "frozen_rel_err", "jacobian_identity_err")  # worst seed, not mean


def measure(run, model, data, x, figure_images):
    """The metrics of one seed's bilinear MLP at the analysed images x (float64), and the arrays its figure draws."""
    model = model.to(run.device)
    acc = evaluate(model, data["x_test"].to(run.device), data["y_test"].to(run.device))[1]
    net = copy.deepcopy(model).double().eval()
    with torch.no_grad():
        f = net(x)
        left, right, out = net.bilinear.left, net.bilinear.right, net.head.weight
        B = torch.einsum("ch,hi,hj->cij", out, left, right)  # (classes, pixels, pixels)
        quad = torch.einsum("cij,ni,nj->nc", B, x, x)
        rows_exact = torch.einsum("cij,ni->ncj", B, x)  # B_c^T x: the frozen-left row of class c
    lin = dynamic_linear_map(model, x)
    jac = jacobian(net, x)
    pred = f.argmax(1)
    metrics = {
        "quadratic_rel_err": rel_err(quad, f, per_sample=True).max().item(),
        "frozen_rel_err": max(rel_err((lin.weight @ x.unsqueeze(-1)).squeeze(-1), f, per_sample=True).max().item(),
                              rel_err(lin.weight, rows_exact, per_sample=True).max().item(),
                              (lin.bias.abs().amax(1) / f.abs().amax(1)).max().item()),
        "jacobian_identity_err": rel_err(jac, rows_exact + torch.einsum("cij,nj->nci", B, x), per_sample=True).max().item(),
        "frozen_vs_jacobian_gap_median": rel_err(lin.weight, jac, per_sample=True).median().item(),
        "test_accuracy": acc,
    }
    k = spread(len(x), figure_images).to(run.device)
    eig = []
    for c in pred[k].tolist():  # the top eigenvector (by |eigenvalue|) of the symmetric form of the predicted class
        vals, vecs = torch.linalg.eigh((B[c] + B[c].T) / 2)
        eig.append(vecs[:, vals.abs().argmax()])
    arrays = {"x": x[k].cpu().numpy(), "rows": lin.weight[k, pred[k]].cpu().numpy(),
              "eigvec": torch.stack(eig).cpu().numpy(), "pred": pred[k].cpu().numpy()}
    return metrics, arrays


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args, p = run.args, run.params
    models, specs, meta = load_models(args.checkpoint)
    data = load_data(args.data)
    x = data["x_test"][spread(len(data["x_test"]), p["images"])].to(run.device, torch.float64)
    seeds = seeds_of(specs)
    per_seed = [measure(run, models[f"bilinear_s{s}"], data, x, p["figure_images"]) for s in seeds]
    metrics = over_seeds([m for m, _ in per_seed], worst=IDENTITIES)
    spec = specs[f"bilinear_s{seeds[0]}"]
    arrays = {**per_seed[0][1], "image_shape": np.array([spec["in_channels"], spec["size"], spec["size"]])}
    info = {"images": len(x), "dtype": "float64", "figures_seed": seeds[0],
            "per_seed": {str(s): m for s, (m, _) in zip(seeds, per_seed)}}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
