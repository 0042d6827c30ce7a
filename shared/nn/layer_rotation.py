"""Layer rotation (Carbonnelle & De Vleeschouwer 2019): how far each layer's kernel has turned from its
initialisation, as the cosine distance 1 - <w(t), w(0)> / (||w(t)|| ||w(0)||) of the whole flattened kernel.

    init = snapshot(model)                  # before training
    layer_rotation(model, init)             # {kernel name: cosine distance}, input layer first

0 = unchanged direction, 1 = orthogonal to the initialisation, up to 2 = opposite. Kernels are the weights of the
linear and convolutional layers (parameters with two or more dimensions), in the model's order; biases and
normalisation parameters are left out, as in the paper's code (scipy.spatial.distance.cosine on each kernel).
"""
import torch


def kernels(model):
    """[(name, parameter)] of the model's kernels (parameters of 2+ dimensions), in registration order."""
    return [(name, p) for name, p in model.named_parameters() if p.ndim >= 2]


def snapshot(model):
    """{kernel name: a float64 copy}: the reference `layer_rotation` measures from."""
    return {name: p.detach().to(torch.float64, copy=True) for name, p in kernels(model)}


def cosine_distance(a, b):
    """1 - cos(a, b) of two tensors flattened, in float64."""
    a, b = a.detach().double().flatten(), b.detach().double().flatten().to(a.device)
    return float(1 - (a @ b) / (a.norm() * b.norm()))


def layer_rotation(model, init):
    """{kernel name: cosine distance between the kernel now and in `init`} ({name: tensor}, e.g. snapshot(model)
    or a state_dict taken at initialisation), input layer first."""
    missing = [name for name, _ in kernels(model) if name not in init]
    if missing:
        raise ValueError(f"layer_rotation: the initial weights lack the kernels {missing}")
    return {name: cosine_distance(p, init[name]) for name, p in kernels(model)}
