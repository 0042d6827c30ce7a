"""What this paper's scripts share: the prepared images as flat float tensors."""

from shared.data.images import load_images


def load_data(path):
    """Prepared dataset -> float32 inputs (N, C*H*W) in [0, 1], channel-first, and int64 labels."""
    return load_images(path, layout="flat")

