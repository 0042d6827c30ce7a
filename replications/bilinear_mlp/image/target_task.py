"""Section 4.3's similarity-to-target task (S-CASPER): digits relabelled into two classes by their cosine similarity
to one target image. label 1 iff cos(x, target) > threshold or cos(x, 1 - target) > threshold, x in [0, 1], flattened.

The paper's target is `train.x[6]` of full MNIST, a "1"; here the target is named by digit and rank within the
training split (rank 0 = the first training image of that digit), so it is defined on any split.
"""
import torch


def target_index(labels, digit, rank):
    """Index of the `rank`-th (0 = first) training image labelled `digit`."""
    idx = torch.nonzero(labels == digit).flatten()
    if rank >= len(idx):
        raise ValueError(f"the training split has {len(idx)} images of digit {digit}; rank {rank} does not exist")
    return int(idx[rank])


def cosine(x, target):
    """cos(x_n, target) for each row of x (n, p), float64; 0 for an all-zero image."""
    x, target = x.double(), target.double()
    return (x @ target) / (x.norm(dim=-1) * target.norm()).clamp_min(1e-300)


def similarity_labels(x, target, threshold):
    """1 iff cos(x, target) > threshold or cos(x, 1 - target) > threshold, else 0: (n,) int64."""
    return ((cosine(x, target) > threshold) | (cosine(x, 1 - target.double()) > threshold)).long()


def relabel(data, task):
    """Images from shared.data.images.load_images (layout "hwc_flat") with the task's 0/1 labels; the digits, the
    target and its index are kept."""
    index = target_index(data["y_train"], task["target_digit"], task["target_rank"])
    target = data["x_train"][index]
    return {
        **data,
        "y_train": similarity_labels(data["x_train"], target, task["threshold"]),
        "y_test": similarity_labels(data["x_test"], target, task["threshold"]),
        "digits_train": data["y_train"], "digits_test": data["y_test"],
        "target": target, "target_index": index,
    }
