"""Adversarial masks built from the weights alone (section 4.4, Fig 7, App M).

Keys: the top `keys_per_class` positive eigenvectors of every class in embedding space, stacked as V (K, d);
M = pinv(V) so that V M = I: column (c, j) excites eigenvector j of class c and no other key. Its pixel-space mask
is m = E^T M[:, (c, j)], signed so that it pushes the usual projection of other digits further out.
Dense (Fig 7A, noise-trained model): m <- s * m / std(m); baseline: the same mask with its pixels permuted.
Edge (Fig 7B, model trained without noise): m restricted to rarely active pixels, scaled by the std of its
non-zero entries; baseline: those entries replaced by s * N(0, 1). Inputs x + m, no clipping, evaluated on the
training images as the authors did. Metrics: accuracy and the rate of 'predicted c while the label is not c',
averaged over the 10 digits x the chosen eigenvectors.
"""
import numpy as np
import torch

from shared.data.images import load_images
from shared.io.runtime import generator
from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics

from .analyze_noise import rare_pixel_mask


def pinv_masks(model, keys_per_class):
    """Pixel-space masks (classes, keys, pixels) and the pixel-space decoders v~ they target."""
    vals, vecs = analysis.eigendecompose(model.interaction_matrices(torch.float64), order="signed")
    keys = vecs[:, :keys_per_class]  # (c, k, d) most positive eigenvectors
    c, k, d = keys.shape
    m = torch.linalg.pinv(keys.reshape(c * k, d))  # (d, c*k)
    embed = model.embed.weight.double()
    masks = (m.T @ embed).reshape(c, k, -1)
    decoders = analysis.project_to_input(keys, embed)
    return masks, decoders


def fix_sign(mask, decoder, x_other):
    """Make the mask move v~ . x the way it already points for inputs of other digits."""
    typical = (x_other @ decoder).sum()
    return mask * torch.sign((mask @ decoder) * typical)


@torch.no_grad()
def attack(model, z, y, target, mask):
    """z = E x of the clean inputs: E (x + m) = z + E m, so only the mask goes through the embedding."""
    pred = model.forward_from_input_layer(z + model.embed(mask)).argmax(-1)
    return 100.0 * (pred == y).double().mean().item(), 100.0 * ((pred == target) & (y != target)).double().mean().item()


def sweep(model, x, y, masks, decoders, cfg, rare=None):
    """(strengths, 4) rows: acc, target rate for the mask; acc, target rate for its random baseline."""
    g = generator(cfg["baseline_seed"])
    out = np.zeros((len(cfg["strengths"]), 4))
    with torch.no_grad():
        z = model.embed(x)
    n_sign = cfg["sign_samples"]
    for c in range(masks.shape[0]):
        x_other = torch.cat([x[y == o][:n_sign] for o in range(masks.shape[0]) if o != c]).double()
        for j in cfg["eigvecs"]:
            base = masks[c, j].clone()
            if rare is not None:
                base = base * rare
            base = fix_sign(base, decoders[c, j], x_other)
            support = base != 0
            perm = torch.randperm(base.numel(), generator=g)
            noise = torch.randn(base.shape, generator=g, dtype=base.dtype)
            for i, s in enumerate(cfg["strengths"]):
                if rare is None:
                    mask = s * base / base.std()
                    random = mask[perm]
                else:
                    mask = s * base / base[support].std()
                    random = torch.where(support, s * noise, torch.zeros_like(base))
                out[i, :2] += attack(model, z, y, c, mask.float())
                out[i, 2:] += attack(model, z, y, c, random.float())
    return out / (masks.shape[0] * len(cfg["eigvecs"]))


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args = run.args
    models, _, meta = load_models(args.checkpoint)
    data = load_images(args.data, layout="hwc_flat")
    cfg = args.params["adversarial"]
    x, y = data["x_train"], data["y_train"]
    rare = rare_pixel_mask(x, args.params["rare_pixel_threshold"]).double()
    metrics, arrays = {}, {"strengths": np.array(cfg["strengths"])}
    for kind, model_name, restrict in (("pinv", "noise", None), ("edge", "clean", rare)):
        model = models[model_name]
        with torch.no_grad():
            clean_acc = 100.0 * (model(x).argmax(-1) == y).double().mean().item()
        masks, decoders = pinv_masks(model, cfg["keys_per_class"])
        curve = sweep(model, x, y, masks, decoders, cfg, restrict)
        arrays[f"{kind}_curve"] = curve
        arrays[f"{kind}_example"] = masks[3, 1].numpy() * (1 if restrict is None else restrict.numpy())
        acc, rate, racc, rrate = curve[-1]
        metrics.update({
            f"{kind}_clean_acc": clean_acc,
            f"{kind}_acc_at_max": acc,
            f"{kind}_target_rate_at_max": rate,
            f"{kind}_random_acc_at_max": racc,
            f"{kind}_random_target_rate_at_max": rrate,
            f"{kind}_excess_drop_at_max": racc - acc,
            f"{kind}_excess_target_rate_at_max": rate - rrate,
        })
    metrics["max_strength"] = cfg["strengths"][-1]
    write_metrics(args.metrics, metrics, meta, info={"evaluated_on": f"{len(x)} training images"},
                  arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
