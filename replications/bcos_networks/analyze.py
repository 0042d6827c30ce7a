"""Every metric of the B-cos claims: accuracy against B beside the ReLU baseline, the exact linear map (identities),
alignment against B, grid localisation of the contribution maps against B and against gradient x input on the ReLU
network, and the Fig. 2 toy sweep (no training).

W(x) is read off by shared.nn.dynamic_linear.dynamic_linear_map (float64) at the encoded input [x, 1 - x]. A
contribution map is W_c(x) ⊙ [x, 1 - x] summed over the channels; on the ReLU network the same product is gradient x
input (its frozen map is its gradient). Alignment is |cos(W_y(x), [x, 1 - x])| for the true class y.
Localisation (grid pointing game): grids of grid x grid test images of different classes, from a pool of images every
model classifies correctly (most confident first, so all models see the same grids); for each cell, the share of the
positive contribution to the cell's class that falls inside the cell, averaged over cells and grids (chance 1/cells).
"""
import copy
import math

import numpy as np
import torch
import torch.nn.functional as F

from shared.nn.bcos import explanation_mode, logit_bias
from shared.nn.dynamic_linear import dynamic_linear_map
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import rel_err, spearman
from shared.train.chunked import chunked

from .common import accuracy, load_data


def linear_map(model, x, chunk=32):
    """W(x) (N, classes, *encoded), b(x), f(x) and the encoded input, in float64, a chunk at a time."""
    parts = [dynamic_linear_map(model.body, model.encode(x[i:i + chunk]), check=False) for i in range(0, len(x), chunk)]
    encoded = model.encode(x.double())
    return (torch.cat([p.weight for p in parts]), torch.cat([p.bias for p in parts]),
            torch.cat([p.output for p in parts]), encoded)


@torch.no_grad()
def predict(model, x, chunk=1000):
    return chunked(model, x, chunk, "predict")  # a smoke run predicts only a few chunks


def input_jacobian(model, encoded, explain):
    """Autograd's input gradient of every logit (N, classes, *encoded), dynamic scales detached when `explain`."""
    m = copy.deepcopy(model).double()
    z = encoded.clone().requires_grad_(True)
    with explanation_mode(m) if explain else torch.enable_grad():
        out = m.body(z)
        rows = [torch.autograd.grad(out[:, k].sum(), z, retain_graph=True)[0] for k in range(out.shape[1])]
    return torch.stack(rows, 1)


def class_maps(model, x, classes, chunk=32):
    """Contribution maps (N, H, W) of one class per image: W_c(x) ⊙ encoded, summed over channels."""
    maps = []
    for i in range(0, len(x), chunk):
        weight, _, _, encoded = linear_map(model, x[i:i + chunk], chunk)
        picked = weight[torch.arange(len(encoded)), classes[i:i + chunk]]
        maps.append((picked * encoded).sum(1))
    return torch.cat(maps)


def cell_shares(maps, cells, grid):
    """Share of the positive part of each map (N, gH, gW) inside its cell (N,) of a grid x grid layout."""
    pos = maps.clamp_min(0)
    n, h, w = pos.shape
    blocks = pos.view(n, grid, h // grid, grid, w // grid).sum((2, 4)).flatten(1)  # (N, grid^2)
    total = blocks.sum(1)
    inside = blocks[torch.arange(n), cells]
    return torch.where(total > 0, inside / total.clamp_min(1e-300), torch.zeros_like(total))


def make_grids(x, pools, grid, count, rng):
    """`count` grids of grid x grid images of different classes: images (count, C, gH, gW), classes (count, grid^2)."""
    classes = np.stack([rng.choice(len(pools), grid * grid, replace=False) for _ in range(count)])
    picks = [[x[rng.choice(pools[c])] for c in row] for row in classes]
    images = torch.stack([torch.cat([torch.cat(row[r * grid:(r + 1) * grid], -1) for r in range(grid)], -2)
                          for row in picks])
    return images, torch.from_numpy(classes)


def localisation(model, images, classes, grid):
    """Mean over grids and cells of the in-cell share of positive contribution; also the per-cell maps."""
    n, cells = classes.shape
    x = images.repeat_interleave(cells, 0)
    cls = classes.flatten()
    maps = class_maps(model, x, cls.to(x.device))
    shares = cell_shares(maps, torch.arange(cells).repeat(n).to(maps.device), grid)
    return shares.mean().item(), maps.view(n, cells, *maps.shape[1:])


def bcos_unit(x, w, b):
    """One B-cos unit at unit scale without the stabilising epsilons: (ŵ^T x) |cos(x, ŵ)|^(B-1)."""
    lin = x @ w
    cos = lin / np.linalg.norm(x, axis=1, keepdims=True)
    return lin * np.abs(cos) ** (b - 1)


def toy(p):
    """Fig. 2: three 2-D clusters, the first the positive class; BCE of one B-cos unit over all unit directions."""
    rng = np.random.default_rng(p["seed"])
    centres = np.array([[0.25, 1.0], [-0.25, 1.0], [0.85, 0.25]])
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    x = np.concatenate([c + p["noise"] * rng.standard_normal((p["points"], 2)) for c in centres])
    y = np.repeat([1.0, 0.0, 0.0], p["points"])
    angles = np.linspace(0, 2 * np.pi, p["angles"], endpoint=False)
    w = np.stack([np.cos(angles), np.sin(angles)])  # (2, angles)
    target = np.arctan2(*x[y == 1].mean(0)[::-1])
    arrays, off = {"toy_angles": np.degrees(angles), "toy_x": x, "toy_y": y}, {}
    for b in p["b_values"]:
        logits = bcos_unit(x, w, b)  # (points, angles)
        loss = np.mean(np.logaddexp(0, logits) - y[:, None] * logits, axis=0)  # BCE with logits
        best = angles[np.argmin(loss)]
        off[b] = abs(math.degrees(math.atan2(math.sin(best - target), math.cos(best - target))))
        arrays[f"toy_loss_B{b:g}"] = loss
    return off, arrays


def main():
    run = start_run("data", "metrics", "arrays", many=("checkpoints", "histories"))  # histories: for provenance
    args, p = run.args, run.params
    device = run.device
    data = {k: v.to(device) for k, v in load_data(args.data).items()}
    x_test, y_test = data["x_test"], data["y_test"]
    models, specs, meta = {}, {}, None
    for path in args.checkpoints:
        loaded, loaded_specs, meta = load_models(path)
        models.update({name: m.to(device) for name, m in loaded.items()})
        specs.update(loaded_specs)
    seeds = {}  # arm -> its models' names, lowest seed first (explanations use that one; accuracy is their mean)
    for name, spec in sorted(specs.items(), key=lambda item: item[1]["seed"]):
        seeds.setdefault(spec["arm"], []).append(name)
    b_of = {spec["arm"]: spec["b"] for spec in specs.values()}
    bcos_names = sorted((a for a in seeds if b_of[a] is not None), key=lambda a: b_of[a])
    relu = next(a for a in seeds if b_of[a] is None)
    bs = [b_of[a] for a in bcos_names]
    acc = {arm: float(np.mean([accuracy(models[n], x_test, y_test) for n in names])) for arm, names in seeds.items()}
    models = {arm: models[names[0]] for arm, names in seeds.items()}

    metrics, arrays = {}, {"b_values": np.array(bs)}
    metrics.update({f"acc_{n}": a for n, a in acc.items()})
    b1, b2, bmax = (next(n for n in bcos_names if b_of[n] == b) for b in (1, 2, max(bs)))
    metrics["acc_drop_B1_Bmax"] = acc[b1] - acc[bmax]
    metrics["acc_gap_relu_B2"] = acc[relu] - acc[b2]

    # identities: f(x) = W(x) x + b_logit, b(x) = b_logit, explanation-mode gradient = W(x); control: plain gradient
    x_id = x_test[: p["identity_images"]]
    exact, bias_err, jac_err = [], [], []
    for name in bcos_names:
        weight, bias, out, encoded = linear_map(models[name], x_id)
        exact.append(rel_err((weight * encoded[:, None]).flatten(2).sum(-1) + bias, out))
        bias_err.append((bias - logit_bias(out.shape[1])).abs().max().item())
        jac_err.append(rel_err(input_jacobian(models[name], encoded, explain=True), weight))
        if name == b2:
            metrics["plain_gradient_rel_err_B2"] = rel_err(input_jacobian(models[name], encoded, explain=False), weight)
    metrics.update(exact_rel_err=max(exact), map_bias_err=max(bias_err), explain_jacobian_rel_err=max(jac_err))

    # alignment: |cos(W_y(x), encoded x)| on test images
    x_al, y_al = x_test[: p["align_images"]], y_test[: p["align_images"]]
    align = {}
    for name in bcos_names + [relu]:
        weight, _, _, encoded = linear_map(models[name], x_al)
        rows = weight[torch.arange(len(y_al)), y_al].flatten(1)
        align[name] = F.cosine_similarity(rows, encoded.flatten(1), dim=1).abs().mean().item()
        metrics[f"align_{name}"] = align[name]
    metrics["align_spearman_B"] = spearman(bs, [align[n] for n in bcos_names])
    metrics["align_ratio_Bmax_B1"] = align[bmax] / align[b1]

    # localisation on grids every model sees alike
    logits = [predict(m, x_test) for m in models.values()]  # one model at a time, in chunks (10,000 CIFAR images)
    probs = torch.stack([torch.sigmoid(z)[torch.arange(len(y_test)), y_test] for z in logits])
    correct = torch.stack([z.argmax(1) == y_test for z in logits]).all(0)
    confidence = probs.mean(0).cpu().numpy()
    pools, all_correct = [], []
    for c in range(int(y_test.max()) + 1):
        # images every model gets right, most confident first; the rest of the class after them (only a barely
        # trained model, as in the tiny test config, leaves a class without an image all models get right)
        idx = np.flatnonzero((y_test == c).cpu().numpy())
        order = np.lexsort((-confidence[idx], ~correct.cpu().numpy()[idx]))
        pools.append(idx[order][: p["confident_per_class"]])
        all_correct.append(int(correct[idx[order][: p["confident_per_class"]]].sum()))
    rng = np.random.default_rng(p["seed"])
    grid_images, grid_classes = make_grids(x_test, pools, p["grid"], p["grids"], rng)
    grid_classes = grid_classes.to(device)
    loc, grid_maps = {}, {}
    for name in bcos_names + [relu]:
        loc[name], maps = localisation(models[name], grid_images, grid_classes, p["grid"])
        grid_maps[name] = maps[0].cpu().numpy()
        metrics[f"loc_{name}"] = loc[name]
    chance = 1 / p["grid"] ** 2
    gen = torch.Generator().manual_seed(p["seed"])
    random_maps = torch.rand(p["grids"] * p["grid"] ** 2, *grid_images.shape[-2:], generator=gen, dtype=torch.float64)
    cells = torch.arange(p["grid"] ** 2).repeat(p["grids"])
    metrics["loc_random_minus_chance"] = cell_shares(random_maps, cells, p["grid"]).mean().item() - chance
    metrics["loc_spearman_B"] = spearman(bs, [loc[n] for n in bcos_names])
    metrics["loc_B2"] = loc[b2]
    metrics["loc_B2_minus_relu_gxi"] = loc[b2] - loc[relu]

    # the Fig. 2 toy
    off, toy_arrays = toy(p["toy"])
    metrics["toy_angle_decrease_deg"] = off[p["toy"]["b_values"][0]] - off[p["toy"]["b_values"][-1]]
    metrics.update({f"toy_angle_B{b:g}_deg": a for b, a in off.items()})

    # figure arrays: metrics against B, contribution maps, toy, training curves
    arrays.update(acc=np.array([acc[n] for n in bcos_names]), align=np.array([align[n] for n in bcos_names]),
                  loc=np.array([loc[n] for n in bcos_names]), relu=np.array([acc[relu], align[relu], loc[relu]]),
                  chance=np.array(chance), **toy_arrays)
    shown = [int(pool[0]) for pool in pools[: p["map_images"]]]
    arrays["map_images"] = x_test[shown].sum(1).cpu().numpy()
    arrays["grid_image"] = grid_images[0].sum(0).cpu().numpy()
    arrays["grid_classes"] = grid_classes[0].cpu().numpy()
    for name in bcos_names + [relu]:
        arrays[f"maps_{name}"] = class_maps(models[name], x_test[shown], y_test[shown]).cpu().numpy()
        arrays[f"grid_maps_{name}"] = grid_maps[name]
    info = {"arms": b_of, "seeds": {a: len(n) for a, n in seeds.items()}, "test_images": len(x_test), "pool_all_correct": all_correct,
            "grids": p["grids"], "grid": p["grid"], "chance": chance}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print({k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()})


if __name__ == "__main__":
    main()
