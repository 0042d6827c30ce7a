"""A network as an input-dependent linear map: freeze every input-dependent factor at x, read off f(x) = W(x) x + b(x).

Each nonlinearity is written as a gate times something linear: relu(x) = 1[x > 0] * x, silu(x) = sigmoid(x) * x,
rms_norm(x) = x / rms(x), attention = softmax(q k^T) v, a bilinear layer = (L x) * (R x), a B-cos unit =
|cos(x, w)|^(B-1) * w^T x. Freezing the gate at its value for x leaves a network that is affine in its input z:

    f_x(z) = W(x) z + b(x),     f_x(x) = f(x)

This is the reading of LinearScope (frozen ReLU and pooling gates), of the equivalent linear mappings of transformers
(detached norm, gate and softmax factors) and of B-cos explanations (detached dynamic scale). The freezing works
through forward hooks on a float64 copy of the model: a first pass at x records each gate, a replay pass at z applies
the recorded gates to z. Nothing in the model or an installed package is patched.

Supported gates: torch's ReLU, LeakyReLU, SiLU, GELU, Tanh, Softmax, MaxPool1d/2d, LayerNorm, RMSNorm, and this
library's RMSNorm, Bilinear (its left half frozen), ActivationMLP and transformer Attention. Any other module opts in
by defining `dynamic_gate(inputs, output) -> gate` and `dynamic_replay(inputs, gate) -> output` (see shared.nn.bcos).
Modules with no gate must be linear in their input (Linear, Conv, AvgPool, Flatten, Embedding lookups excluded: pass
embeddings in). `dynamic_linear_map` checks that: a module it cannot freeze makes f_x(x) differ from f(x).
"""
import copy
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from shared.io.smoke import cap, capped
from shared.nn.bilinear import GATES as BILINEAR_GATES
from shared.nn.bilinear import ActivationMLP, Bilinear, RMSNorm
from shared.nn.transformer import Attention, apply_rotary


def _elementwise(value_at_zero):
    """A gate act(x) / x for an activation with act(0) = 0; `value_at_zero` is its limit (or convention) at 0."""
    def gate(module, inputs, output):
        x = inputs[0]
        return torch.where(x != 0, output / torch.where(x != 0, x, 1), torch.full_like(x, value_at_zero))

    def replay(module, inputs, gate):
        return gate * inputs[0]
    return gate, replay


def _maxpool_gate(module, inputs, output):
    pool = F.max_pool1d if isinstance(module, nn.MaxPool1d) else F.max_pool2d
    return pool(inputs[0], module.kernel_size, module.stride, module.padding, module.dilation,
                ceil_mode=module.ceil_mode, return_indices=True)[1]


def _maxpool_replay(module, inputs, indices):
    # the recorded indices point into each channel's flattened window-space (H * W for 2-D, L for 1-D)
    flat_dims = -2 if isinstance(module, nn.MaxPool2d) else -1
    return inputs[0].flatten(flat_dims).gather(-1, indices.flatten(flat_dims)).view_as(indices)


def _layer_norm_gate(module, inputs, output):
    dims = tuple(range(-len(module.normalized_shape), 0))
    return torch.rsqrt(inputs[0].var(dims, unbiased=False, keepdim=True) + module.eps)


def _layer_norm_replay(module, inputs, inv_std):
    dims = tuple(range(-len(module.normalized_shape), 0))
    z = inputs[0]
    y = (z - z.mean(dims, keepdim=True)) * inv_std
    if module.weight is not None:
        y = y * module.weight
    return y if module.bias is None else y + module.bias


def _rms_gate(module, inputs, output):
    x = inputs[0]
    eps = module.eps if module.eps is not None else torch.finfo(x.dtype).eps
    dims = tuple(range(-len(module.normalized_shape), 0)) if hasattr(module, "normalized_shape") else (-1,)
    return torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)


def _rms_replay(module, inputs, inv_rms):
    y = inputs[0] * inv_rms
    return y if module.weight is None else y * module.weight


def _bilinear_gate(module, inputs, output):
    left = F.linear(inputs[0], module.left, module.left_bias)
    act = BILINEAR_GATES[module.gate]
    return left if act is None else act(left)


def _bilinear_replay(module, inputs, left):
    return left * F.linear(inputs[0], module.right, module.right_bias)


def _activation_mlp_gate(module, inputs, output):
    u = module.up(inputs[0])
    act = module.ACTIVATIONS[module.activation](u)
    return torch.where(u != 0, act / torch.where(u != 0, u, 1), torch.zeros_like(u))


def _activation_mlp_replay(module, inputs, gate):
    return module.down(gate * module.up(inputs[0]))


def _attention_probs(module, x):
    b, t, _ = x.shape
    q, k, _ = module.qkv(x).view(b, t, 3, module.n_head, module.d_head).permute(2, 0, 3, 1, 4)
    q, k = apply_rotary(q, module.cos, module.sin), apply_rotary(k, module.cos, module.sin)
    scores = q @ k.transpose(-1, -2) / math.sqrt(module.d_head)
    causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
    return scores.masked_fill(~causal, float("-inf")).softmax(-1)


def _attention_replay(module, inputs, probs):
    z = inputs[0]
    b, t, d = z.shape
    v = module.qkv(z).view(b, t, 3, module.n_head, module.d_head)[:, :, 2].transpose(1, 2)
    return module.out((probs @ v).transpose(1, 2).reshape(b, t, d))


# module type -> (gate(module, inputs, output), replay(module, inputs, gate)); subclasses match their base entry
FREEZERS = {
    nn.ReLU: _elementwise(0.0),
    nn.LeakyReLU: _elementwise(1.0),
    nn.SiLU: _elementwise(0.5),
    nn.GELU: _elementwise(0.5),
    nn.Tanh: _elementwise(1.0),
    nn.Softmax: (lambda module, inputs, output: output, lambda module, inputs, probs: probs),
    nn.MaxPool1d: (_maxpool_gate, _maxpool_replay),
    nn.MaxPool2d: (_maxpool_gate, _maxpool_replay),
    nn.LayerNorm: (_layer_norm_gate, _layer_norm_replay),
    nn.RMSNorm: (_rms_gate, _rms_replay),
    RMSNorm: (_rms_gate, _rms_replay),
    Bilinear: (_bilinear_gate, _bilinear_replay),
    ActivationMLP: (_activation_mlp_gate, _activation_mlp_replay),
    Attention: (lambda module, inputs, output: _attention_probs(module, inputs[0]), _attention_replay),
}


def freezer(module):
    """(gate, replay) for a module, or None when it has no input-dependent factor of its own."""
    if hasattr(module, "dynamic_gate") and hasattr(module, "dynamic_replay"):
        return (lambda m, inputs, output: m.dynamic_gate(inputs, output),
                lambda m, inputs, gate: m.dynamic_replay(inputs, gate))
    for cls in type(module).__mro__:
        if cls in FREEZERS:
            return FREEZERS[cls]
    return None


class ConstantGate(nn.Module):
    """The identity on a gate tensor computed by a function (e.g. softmax inside a library's attention, which no
    hook can reach): pass the factor through it, and under dynamic_linear_map its value at x is recorded, then
    replayed as a constant when the network is run at z."""

    def forward(self, gate):
        return gate

    def dynamic_gate(self, inputs, output):
        return output

    def dynamic_replay(self, inputs, gate):
        return gate


class FrozenGates:
    """Forward hooks on every gated module of `model`: `record` stores each call's gate in call order, `replay` feeds
    the stored gates to the next pass (a module called twice gets its two gates in order). Outer gated modules
    (a Bilinear, an Attention) take precedence over the gates inside them."""

    def __init__(self, model):
        self.mode, self.gates, self.cursor, self.handles = "off", {}, {}, []
        inner = set()
        for name, module in model.named_modules():
            if any(name.startswith(f"{outer}.") or outer == "" for outer in inner):
                continue
            rule = freezer(module)
            if rule is not None:
                inner.add(name)
                self.handles.append(module.register_forward_hook(self._hook(name, *rule)))

    def _hook(self, name, gate, replay):
        def hook(module, inputs, output):
            if self.mode == "record":
                self.gates.setdefault(name, []).append(gate(module, inputs, output).detach())
                return None
            if self.mode == "replay":
                calls = self.gates[name]
                i = self.cursor.get(name, 0)
                self.cursor[name] = i + 1
                return replay(module, inputs, calls[i])
            return None
        return hook

    def run(self, mode, forward):
        self.mode, self.cursor = mode, {}
        if mode == "record":
            self.gates = {}
        try:
            return forward()
        finally:
            self.mode = "off"

    def remove(self):
        for handle in self.handles:
            handle.remove()


@dataclass
class DynamicLinearMap:
    """f(x) = weight @ x + bias per sample: weight (N, *out, *in), bias and output (N, *out), all float64."""
    weight: torch.Tensor
    bias: torch.Tensor
    output: torch.Tensor

    def apply(self, z):
        """W(x) z + b(x) for inputs z shaped like x."""
        n, out_shape = self.bias.shape[0], self.bias.shape[1:]
        flat = self.weight.reshape(n, out_shape.numel(), -1) @ z.reshape(n, -1, 1).to(self.weight.dtype)
        return flat.reshape(n, *out_shape) + self.bias

    def contributions(self, x):
        """W(x) ⊙ x per output unit: (N, *out, *in); summed over the input it gives weight @ x."""
        n, in_shape = x.shape[0], x.shape[1:]
        return self.weight * x.to(self.weight.dtype).reshape(n, *([1] * (self.bias.dim() - 1)), *in_shape)


def _float_copy(model, dtype):
    m = copy.deepcopy(model).to(dtype).eval()
    for module in m.modules():
        if getattr(module, "inplace", False):
            module.inplace = False  # a replay must not overwrite its input before the hook sees it
    return m


def jacobian_rows(flat, z):
    """d flat[:, k] / d z for each output coordinate k, (N, K, *z.shape[1:]): one backward pass a coordinate, summed
    over the batch. A smoke run (shared.io.smoke) reads only the first rows and the last; the others stay zero."""
    weight = z.new_zeros(flat.shape[0], flat.shape[1], *z.shape[1:])
    for k in capped(range(flat.shape[1]), flat.shape[1], "jacobian_rows", count_flops=False):  # FLOPs: see capped
        (grad,) = torch.autograd.grad(flat[:, k].sum(), z, retain_graph=k + 1 < flat.shape[1], allow_unused=True)
        if grad is not None:
            weight[:, k] = grad
    return weight


def smoke_skips_rows(k):
    return cap() is not None and k > cap()


def dynamic_linear_map(model, x, forward=None, dtype=torch.float64, check=True, atol=1e-9):
    """The frozen-gate map of `model` at each sample of x (N, *in): weight (N, *out, *in) and bias (N, *out).

    `forward(model, z)` is what is differentiated (default `model(z)`): pass one that starts from embeddings or
    picks one position. Samples must not interact (eval mode: no batch statistics); the weight is read one output
    coordinate at a time with a backward pass summed over the batch. With `check`, f_x(x) must equal f(x) and
    W x + b must equal f_x(x) within `atol` (relative to the output's scale), else a module was not frozen.
    """
    forward = forward or (lambda m, z: m(z))
    m = _float_copy(model, dtype)
    hooks = FrozenGates(m)
    try:
        x = x.detach().to(dtype)
        with torch.no_grad():
            output = hooks.run("record", lambda: forward(m, x))
            bias = hooks.run("replay", lambda: forward(m, torch.zeros_like(x)))
        z = x.clone().requires_grad_(True)
        replayed = hooks.run("replay", lambda: forward(m, z))
        flat = replayed.reshape(x.shape[0], -1)
        weight = jacobian_rows(flat, z).reshape(*output.shape, *x.shape[1:])
    finally:
        hooks.remove()
    result = DynamicLinearMap(weight, bias, output)
    if check and not smoke_skips_rows(flat.shape[1]):
        scale = output.abs().max().clamp_min(1.0)
        frozen_gap = (replayed.detach() - output).abs().max() / scale
        affine_gap = (result.apply(x) - output).abs().max() / scale
        if frozen_gap > atol or affine_gap > atol:
            raise ValueError(f"the frozen network is not the network at x (gap {frozen_gap:.2e}) or not affine in its "
                             f"input (gap {affine_gap:.2e}): a module has an input-dependent factor with no freezer")
    return result
