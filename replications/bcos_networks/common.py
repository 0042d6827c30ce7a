"""What this paper's scripts share: the prepared data as image tensors, and the accuracy of a model."""
import torch

from shared.data.images import load_images


def load_data(path):
    """digits (N, 64) floats in [0, 1] -> (N, 1, 8, 8); a registry image set -> (N, C, H, W) in [0, 1]."""
    return load_images(path, layout="chw")


@torch.no_grad()
def accuracy(model, x, y, chunk=1000):
    correct = sum((model(x[i:i + chunk]).argmax(1) == y[i:i + chunk]).sum().item() for i in range(0, len(x), chunk))
    return correct / len(x)
