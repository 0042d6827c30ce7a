"""The quadratic neuron of Fan et al. (TNNLS 2023, "On Expressivity and Trainability of Quadratic Networks") and
ReLinear, their referenced-linear initialisation and learning-rate treatment of the quadratic terms.

    QuadraticLinear(x) = (W_r x + b_r) * (W_g x + b_g) + W_b (x * x) + c        (elementwise *, one row per neuron)

Three maps of the input: r (the "reference" linear map), g (the gate multiplying it) and b (a map of the squared
input, whose bias is c). Not shared/nn/multiplicative.py's x^2 unit ((W x)^2, the registry's "quadratic" family):
that is a conventional neuron with a square activation; this neuron has 3 (d_in + 1) parameters per output.

ReLinear (dossier 2.2): `relinear_init` sets W_g = 0, b_g = 1, W_b = 0, c = 0, so the layer is exactly the linear map
W_r x + b_r; `quadratic_param_groups` then gives g and b their own (smaller) learning rate ("shrinking gradients").
The groups are built from the modules, not from parameter-name substrings as the official code does.
"""
import torch
from torch import nn

from shared.nn.layer_registry import Activated, register


class QuadraticLinear(nn.Module):
    """(..., d_in) -> (..., d_out). At construction r, g and b each get nn.Linear's default init (the "random"
    initialisation of a quadratic network trained as is); call relinear_init for ReLinear's."""

    def __init__(self, d_in, d_out, bias=True):
        super().__init__()
        self.d_in, self.d_out = d_in, d_out
        self.r = nn.Linear(d_in, d_out, bias=bias)
        self.g = nn.Linear(d_in, d_out, bias=bias)
        self.b = nn.Linear(d_in, d_out, bias=bias)  # b.bias is the neuron's constant c

    def forward(self, x):
        return self.r(x) * self.g(x) + self.b(x * x)

    def quadratic_parameters(self):
        """The parameters ReLinear treats as quadratic: W_g, b_g, W_b and c (the official code's 'g.' and 'b.')."""
        return [*self.g.parameters(), *self.b.parameters()]

    def extra_repr(self):
        return f"d_in={self.d_in}, d_out={self.d_out}, bias={self.r.bias is not None}"


class QuadraticConv2d(nn.Module):
    """The same neuron as a convolution (the official QResNet's layer): r(x) * g(x) + b(x * x), each of r, g, b an
    nn.Conv2d with the given arguments; x * x is padded like x, so padded zeros stay zero."""

    def __init__(self, c_in, c_out, kernel_size, stride=1, padding=0, bias=True):
        super().__init__()
        self.r, self.g, self.b = (nn.Conv2d(c_in, c_out, kernel_size, stride, padding, bias=bias) for _ in range(3))

    def forward(self, x):
        return self.r(x) * self.g(x) + self.b(x * x)

    quadratic_parameters = QuadraticLinear.quadratic_parameters


@torch.no_grad()
def relinear_init(model):
    """ReLinear's referenced-linear initialisation of every quadratic layer in `model`, in place: W_g = 0, b_g = 1,
    W_b = 0, c = 0, so each layer computes W_r x + b_r (its r keeps its own init). Returns `model`."""
    for layer in quadratic_layers(model):
        if layer.g.bias is None:  # without biases the gate W_g x = 0 would zero the layer: no linear reference
            raise ValueError("relinear_init needs QuadraticLinear(bias=True): b_g = 1 is what makes the layer linear")
        nn.init.zeros_(layer.g.weight)
        nn.init.ones_(layer.g.bias)
        nn.init.zeros_(layer.b.weight)
        nn.init.zeros_(layer.b.bias)
    return model


def quadratic_layers(model):
    return [m for m in model.modules() if isinstance(m, (QuadraticLinear, QuadraticConv2d))]


def quadratic_param_groups(model, lr, lr_quadratic):
    """Optimizer parameter groups for ReLinear's shrinking gradients: every quadratic parameter (W_g, b_g, W_b, c of
    each QuadraticLinear or QuadraticConv2d) at lr_quadratic, every other parameter (W_r, b_r and the rest of the model) at lr."""
    quadratic = {id(p) for layer in quadratic_layers(model) for p in layer.quadratic_parameters()}
    rest = [p for p in model.parameters() if id(p) not in quadratic]
    quad = [p for p in model.parameters() if id(p) in quadratic]
    return [{"params": rest, "lr": lr, "group": "linear"}, {"params": quad, "lr": lr_quadratic, "group": "quadratic"}]


def _block(d, h, bias):
    """d -> h quadratic neurons -> ReLU -> d quadratic neurons: the paper's networks put ReLU after every neuron
    but the last."""
    return nn.Sequential(Activated(QuadraticLinear(d, h, bias), torch.relu), QuadraticLinear(h, d, bias))


register("quadratic_neuron", layer=lambda d_in, d_out, bias: QuadraticLinear(d_in, d_out, bias),
         params=lambda d_in, d_out, bias: 3 * d_in * d_out + bias * 3 * d_out,
         macs=lambda d_in, d_out, bias: 3 * d_in * d_out,
         block=_block, block_params=lambda d, h, bias: 6 * d * h + bias * 3 * (h + d),
         block_macs=lambda d, h, bias: 6 * d * h,
         hyper={"bias": True}, nonlinear=True, cite="Fan et al. 2023 (ReLinear quadratic neuron)")
