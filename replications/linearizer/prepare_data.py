"""Write one dataset of this paper as float-ready arrays: results/linearizer/<tier>/data/<dataset>.safetensors.

eight_gaussians: generated 2-D points (a mixture of 8 Gaussians on a circle), seeded.
digits: scikit-learn's bundled 8x8 digits (in the package, nothing downloaded), 16 grey levels scaled to [0, 1];
        the last 450 images (other writers than most of the first ones) are the test split.
mnist_5k / mnist / celeba_64: a prepared registry dataset (shared/data/registry.py), kept as uint8 (scale 255), shaped
        flat (D,) or as an image (C, H, W), optionally resized (the released code resizes MNIST to 32 x 32).
"""
import json

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits

from shared.data import read_prepared, write_safetensors
from shared.pipeline.run import start_run


def eight_gaussians(n, seed, radius, std):
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * rng.integers(0, 8, n) / 8
    centres = radius * np.stack([np.cos(angles), np.sin(angles)], 1)
    return (centres + std * rng.standard_normal((n, 2))).astype(np.float32)


def registry_images(path, layout, size):
    """Registry images are uint8, (N, H, W) greyscale or (N, H, W, C) colour; returned as (N, C, H, W) or flat."""
    arrays, _ = read_prepared(path)
    out = {}
    for split in ("train", "test"):
        x = torch.from_numpy(arrays[f"x_{split}"])
        x = x[:, None] if x.dim() == 3 else x.permute(0, 3, 1, 2)
        if size and x.shape[-1] != size:  # bilinear resize in float, back to uint8
            x = F.interpolate(x.float(), size=(size, size), mode="bilinear", antialias=True, align_corners=False)
            x = x.round().clamp(0, 255).to(torch.uint8)
        out[f"x_{split}"] = (x.reshape(len(x), -1) if layout == "flat" else x).contiguous().numpy()
        out[f"y_{split}"] = arrays[f"y_{split}"].astype(np.int64)
    return out, 255.0


def main():
    run = start_run("out", optional=("source",))
    args, p = run.args, run.params  # {"dataset": name, "spec": its config}; --source: the prepared registry file
    name, spec = p["dataset"], p["spec"]
    if name == "eight_gaussians":  # the training points from the dataset's seed, the test points from a stream of it
        arrays = {"x_train": eight_gaussians(spec["train"], spec["seed"], spec["radius"], spec["std"]),
                  "x_test": eight_gaussians(spec["test"], run.seed(spec["seed"], "test"), spec["radius"], spec["std"])}
        arrays |= {"y_train": np.zeros(spec["train"], np.int64), "y_test": np.zeros(spec["test"], np.int64)}
        scale = 1.0
    elif name == "digits":
        digits = load_digits()
        x, y = (digits.data / 16.0).astype(np.float32), digits.target.astype(np.int64)
        cut = len(x) - 450
        arrays, scale = {"x_train": x[:cut], "y_train": y[:cut], "x_test": x[cut:], "y_test": y[cut:]}, 1.0
        if spec["layout"] == "image":
            arrays["x_train"], arrays["x_test"] = (a.reshape(-1, 1, 8, 8) for a in (arrays["x_train"], arrays["x_test"]))
    else:
        arrays, scale = registry_images(args.source[0], spec["layout"], spec.get("size"))
    shape = list(arrays["x_train"].shape[1:])
    write_safetensors(arrays, args.out, {"dataset": name, "shape": json.dumps(shape), "scale": str(scale)})
    print({k: v.shape for k, v in arrays.items()})


if __name__ == "__main__":
    main()
