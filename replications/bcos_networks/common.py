"""What this paper's scripts share: the prepared data as image tensors, and the accuracy of a model."""
from shared.data.images import load_images
from shared.train.evaluate import accuracy as chunked_accuracy


def load_data(path):
    """digits (N, 64) floats in [0, 1] -> (N, 1, 8, 8); a registry image set -> (N, C, H, W) in [0, 1]."""
    return load_images(path, layout="chw")


def accuracy(model, x, y, count_flops=True):
    """The shared chunked accuracy at this paper's chunk of 1,000 images (a smoke run evaluates a few chunks).
    count_flops=False inside a training loop's step, where the smoke's FLOP counter may be open already."""
    return chunked_accuracy(model, x, y, chunk=1000, count_flops=count_flops)
