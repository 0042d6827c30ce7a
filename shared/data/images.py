"""A prepared image file (shared.data.read_prepared) as float tensors, in the layout and normalisation a paper's model
reads. Its own module so that `import shared.data` (the prepare rules) does not import torch."""
import torch

from shared.data.prepare import read_prepared

LAYOUTS = ("flat", "chw", "hwc_flat")
NORMALISATIONS = (None, "centre", "per_channel")


def as_images(x, layout="flat"):
    """One array of images -> float32 tensor: uint8 pixels divided by 255 (float arrays kept as they are).

    layout "flat": (N, C*H*W), channels first (colour is stored HWC); "chw": (N, C, H, W), greyscale gaining C = 1 and
    flat square rows (e.g. digits, (N, 64)) becoming (N, 1, 8, 8); "hwc_flat": (N, H*W*C), flattened as stored."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r} is not one of {LAYOUTS}")
    x = torch.from_numpy(x)
    x = x.float() / 255.0 if x.dtype == torch.uint8 else x.float()
    if layout == "hwc_flat":
        return x.reshape(len(x), -1).contiguous()
    if x.dim() == 2:  # flat square rows
        side = round(x.shape[1] ** 0.5)
        x = x.view(-1, side, side)
    x = x.unsqueeze(1) if x.dim() == 3 else x.permute(0, 3, 1, 2)
    return (x.reshape(len(x), -1) if layout == "flat" else x).contiguous()


def load_images(path, layout="flat", normalise=None, mean=None, std=None):
    """{x_train, y_train, x_test, y_test}: images as `as_images` makes them, int64 labels.

    normalise None: pixels in [0, 1]; "centre": minus the training set's mean image; "per_channel": (x - mean) / std
    with one mean and std per channel (layout "chw" only)."""
    if normalise not in NORMALISATIONS:
        raise ValueError(f"normalise {normalise!r} is not one of {NORMALISATIONS}")
    if normalise == "per_channel" and (layout != "chw" or mean is None or std is None):
        raise ValueError("normalise='per_channel' needs layout='chw' and a mean and std per channel")
    arrays, _ = read_prepared(path, keys=("x_train", "y_train", "x_test", "y_test"))
    data = {}
    for split in ("train", "test"):
        data[f"x_{split}"] = as_images(arrays[f"x_{split}"], layout)
        data[f"y_{split}"] = torch.from_numpy(arrays[f"y_{split}"]).long()
    if normalise == "centre":
        centre = data["x_train"].mean(0)
        data["x_train"], data["x_test"] = data["x_train"] - centre, data["x_test"] - centre
    elif normalise == "per_channel":
        mean, std = torch.tensor(mean)[:, None, None], torch.tensor(std)[:, None, None]
        data["x_train"], data["x_test"] = (data["x_train"] - mean) / std, (data["x_test"] - mean) / std
    return data
