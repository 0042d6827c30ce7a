"""What this paper's scripts share: the prepared images as flat float tensors, and the scoring over seeds."""
import numpy as np

from shared.data.images import load_images


def load_data(path):
    """Prepared dataset -> float32 inputs (N, C*H*W) in [0, 1], channel-first, and int64 labels."""
    return load_images(path, layout="flat")


def seeds_of(specs):
    """The seeds a checkpoint's runs were trained at, in order (one run per model and seed: `<model>_s<seed>`)."""
    return sorted({s["seed"] for s in specs.values()})


def over_seeds(per_seed, worst=()):
    """One metrics dict from one per seed: the mean over seeds, or the largest value for the keys in `worst` (an
    identity's error is the worst case over images, and so over seeds too)."""
    return {k: max(m[k] for m in per_seed) if k in worst else float(np.mean([m[k] for m in per_seed]))
            for k in per_seed[0]}
