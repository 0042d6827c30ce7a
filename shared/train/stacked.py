"""Many models of one architecture trained as one: parameters stacked on a leading axis, forward by vmap.

Small recurrent models are launch-bound: a step costs the same for one model as for twenty. Stacking runs them in
the same kernels. Adam is elementwise and `clip_grad_norm_` clips each model by its own norm, so every model
takes the steps it would take alone, up to the order of float reductions (about 1e-7 per step). Training can
amplify that rounding: at a learning rate of 0.01 a CP model's weights drift apart by 1e-2 to 1e-1 after 300 steps
(reports/benchmarks.json), as they would between two BLAS builds. A given grouping is deterministic on a CPU.
"""
import copy

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap


class Stack(nn.Module):
    """`Stack(models)(*inputs)`: inputs carry a leading model axis; outputs do too."""

    def __init__(self, models):
        super().__init__()
        models = list(models)
        shapes = {tuple((k, tuple(v.shape)) for k, v in m.state_dict().items()) for m in models}
        if len(shapes) != 1:
            raise ValueError("a Stack needs models with identical parameter names and shapes")
        params, buffers = stack_module_state(models)
        self.n = len(models)
        self.names = list(params)
        self.stacked = nn.ParameterList(nn.Parameter(params[k].detach().clone()) for k in self.names)
        self.buffers_ = buffers
        self.base = [copy.deepcopy(models[0]).to("meta")]  # in a list: not a submodule, never trained

    def forward(self, *inputs):
        def call(params, buffers, *args):
            return functional_call(self.base[0], (params, buffers), args)

        params = dict(zip(self.names, self.stacked))
        return vmap(call, randomness="different")(params, self.buffers_, *inputs)

    def model_grad_norms(self):
        squares = sum(p.grad.reshape(self.n, -1).pow(2).sum(1) for p in self.stacked if p.grad is not None)
        return squares.sqrt()

    @torch.no_grad()
    def clip_grad_norm_(self, max_norm):
        """Scale each model's gradient to norm <= max_norm (torch.nn.utils.clip_grad_norm_ per model)."""
        norms = self.model_grad_norms()
        scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
        for p in self.stacked:
            if p.grad is not None:
                p.grad.mul_(scale.view(-1, *[1] * (p.grad.dim() - 1)))
        return norms

    @torch.no_grad()
    def unstack_into(self, models):
        """Copy the trained weights back into the individual models."""
        for i, model in enumerate(models):
            model.load_state_dict({**{k: p[i] for k, p in zip(self.names, self.stacked)},
                                   **{k: b[i] for k, b in self.buffers_.items()}})
