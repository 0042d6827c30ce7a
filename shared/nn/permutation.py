"""Permutation symmetry of hidden units, and the three ways of Git Re-Basin (Ainsworth et al., 2023) to undo it.

A model declares its symmetry as a PermutationSpec: for every state_dict entry, one item per axis, either None (not
permuted) or the name of the permutation acting on it. An item may also be (name, blocks): the axis is `blocks`
stacked copies of the permuted units, as in a Bilinear layer whose one matmul holds both halves (left; right), whose
hidden unit i owns row i of each half. Permuting every named axis by its permutation leaves the function unchanged.

Convention: perm[p] is a LongTensor with permuted[i] = original[perm[p][i]] along each axis tied to p.

  * weight_matching: the coordinate descent of Algorithm 1 (one linear assignment per permutation, the others
    fixed, in a random order each sweep, until a sweep brings no gain); data-free.
  * activation_matching: one assignment per permutation, from the cross-moments of the two models' activations.
  * ste_matching: Algorithm 2, straight-through learning of a model whose projection, averaged with A, has low loss.
The assignments are solved by SciPy's linear_sum_assignment in float64.
"""
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch.func import functional_call


@dataclass(frozen=True)
class PermutationSpec:
    axes: dict  # state_dict key -> tuple with one item per axis: None, "P", or ("P", blocks)

    @property
    def perms(self):
        """{permutation name: [(key, axis, blocks), ...]} in declaration order."""
        out = {}
        for key, items in self.axes.items():
            for axis, item in enumerate(items):
                if item is not None:
                    name, blocks = (item, 1) if isinstance(item, str) else item
                    out.setdefault(name, []).append((key, axis, blocks))
        return out

    def sizes(self, state):
        """{permutation name: number of units}, checked to agree across every axis it acts on."""
        sizes = {}
        for name, uses in self.perms.items():
            for key, axis, blocks in uses:
                if key not in state:
                    raise KeyError(f"permutation spec names '{key}', which the state_dict lacks")
                n, rest = divmod(state[key].shape[axis], blocks)
                if rest:
                    raise ValueError(f"'{key}' axis {axis} ({state[key].shape[axis]}) is not {blocks} blocks")
                if sizes.setdefault(name, n) != n:
                    raise ValueError(f"permutation '{name}' acts on {sizes[name]} units and on {n} ('{key}')")
        return sizes


# ---- spec builders: one call per layer, chained by permutation names (None at the model's input and output) ----
def dense(name, out, inp, bias=True):
    """nn.Linear `name`: weight (out, in), bias (out)."""
    return {f"{name}.weight": (out, inp), **({f"{name}.bias": (out,)} if bias else {})}


def bilinear(name, out, inp, bias=False):
    """shared.nn.bilinear.Bilinear `name`: its proj holds (left; right), so both halves share the output permutation."""
    item = None if out is None else (out, 2)
    return {f"{name}.proj.weight": (item, inp), **({f"{name}.proj.bias": (item,)} if bias else {})}


def conv(name, out, inp, bias=True):
    """nn.Conv2d `name`: weight (out, in, kh, kw)."""
    return {f"{name}.weight": (out, inp, None, None), **({f"{name}.bias": (out,)} if bias else {})}


def norm(name, units, bias=True):
    """LayerNorm / GroupNorm-free per-channel scale and shift: both follow their units' permutation."""
    return {f"{name}.weight": (units,), **({f"{name}.bias": (units,)} if bias else {})}


def mlp_spec(layer_names, bias=True):
    """Dense layers in order: hidden layer i's units are permutation P{i}; the input and output are not permuted."""
    axes = {}
    for i, name in enumerate(layer_names):
        out = f"P{i}" if i < len(layer_names) - 1 else None
        axes.update(dense(name, out, f"P{i - 1}" if i else None, bias))
    return PermutationSpec(axes)


def bilinear_mlp_spec(hidden_names, readout_name, bilinear_bias=False, readout_bias=True):
    """Bilinear hidden layers in order, then a dense readout: hidden layer i's units are P{i}."""
    axes = {}
    for i, name in enumerate(hidden_names):
        axes.update(bilinear(name, f"P{i}", f"P{i - 1}" if i else None, bilinear_bias))
    axes.update(dense(readout_name, None, f"P{len(hidden_names) - 1}", readout_bias))
    return PermutationSpec(axes)


# ---- applying permutations ----
def _take(tensor, axis, blocks, index):
    """tensor with axis (blocks * n units) reindexed: each block's unit i becomes its unit index[i]."""
    shape = tensor.shape
    split = tensor.reshape(*shape[:axis], blocks, shape[axis] // blocks, *shape[axis + 1:])
    return split.index_select(axis + 1, index.to(tensor.device)).reshape(shape)


def apply_permutation(spec, perm, state, skip=None):
    """A new state_dict with every axis the spec ties to a permutation in `perm` reindexed (except `skip`'s)."""
    out = dict(state)
    for name, uses in spec.perms.items():
        if name == skip or name not in perm:
            continue
        for key, axis, blocks in uses:
            out[key] = _take(out[key], axis, blocks, perm[name])
    return out


def identity_permutation(spec, state):
    return {name: torch.arange(n) for name, n in spec.sizes(state).items()}


def random_permutation(spec, state, generator):
    return {name: torch.randperm(n, generator=generator) for name, n in spec.sizes(state).items()}


def invert(perm):
    return {name: torch.argsort(p) for name, p in perm.items()}


def _units_first(tensor, axis, blocks):
    """(n, everything else) with the permuted units as rows, float64."""
    shape = tensor.shape
    split = tensor.detach().reshape(*shape[:axis], blocks, shape[axis] // blocks, *shape[axis + 1:])
    return split.movedim(axis + 1, 0).reshape(shape[axis] // blocks, -1).double().cpu()


def matching_objective(spec, state_a, state_b, perm):
    """sum over the spec's entries of <theta_a, pi(theta_b)>: what weight matching maximises."""
    permuted = apply_permutation(spec, perm, state_b)
    return sum(float((state_a[k].double() * permuted[k].double()).sum()) for k in spec.axes)


def _assign(similarity):
    """The permutation maximising trace(S[:, perm]), i.e. sum_i S[i, perm[i]]."""
    rows, cols = linear_sum_assignment(similarity.numpy(), maximize=True)
    return torch.as_tensor(cols[np.argsort(rows)], dtype=torch.long)


def weight_matching(spec, state_a, state_b, max_sweeps=100, init=None, seed=0):
    """pi maximising sum <theta_a, pi(theta_b)> by coordinate descent (Algorithm 1), and the number of sweeps run.

    Each sweep visits the permutations in a fresh random order (seeded); for permutation p, with all others fixed,
    S = sum over p's axes of A_units x B_units^T (B with the other permutations applied), and p <- argmax <P, S>.
    It stops after the first sweep in which no assignment raised the objective by more than 1e-12.
    """
    perm = {k: v.clone() for k, v in (init or identity_permutation(spec, state_b)).items()}
    uses, rng = spec.perms, np.random.default_rng(seed)
    names = list(uses)
    for sweep in range(1, max_sweeps + 1):
        progress = False
        for i in rng.permutation(len(names)):
            name = names[i]
            others = apply_permutation(spec, perm, state_b, skip=name)
            similarity = sum(_units_first(state_a[key], axis, blocks) @ _units_first(others[key], axis, blocks).T
                             for key, axis, blocks in uses[name])
            old = float(similarity[torch.arange(len(perm[name])), perm[name]].sum())
            new_perm = _assign(similarity)
            new = float(similarity[torch.arange(len(new_perm)), new_perm].sum())
            if new > old + 1e-12:
                perm[name], progress = new_perm, True
        if not progress:
            return perm, sweep
    return perm, max_sweeps


def activation_matching(acts_a, acts_b):
    """{name: pi} from activations {name: (samples, units, *spatial)} of A and B on the same inputs.

    Each permutation is one assignment on the uncentred cross-moment E[a b^T] (spatial positions count as samples),
    so pi(B)'s units are, in order, those of B most alike to A's.
    """
    perm = {}
    for name, a in acts_a.items():
        flat_a = a.detach().movedim(1, -1).reshape(-1, a.shape[1]).double().cpu()
        b = acts_b[name]
        flat_b = b.detach().movedim(1, -1).reshape(-1, b.shape[1]).double().cpu()
        perm[name] = _assign(flat_a.T @ flat_b / len(flat_a))
    return perm


def collect_activations(model, inputs, modules, batch=1024):
    """{permutation name: output of the module named modules[name]} over `inputs`, without gradients."""
    named, store, hooks = dict(model.named_modules()), {k: [] for k in modules}, []
    for perm_name, module_name in modules.items():
        hooks.append(named[module_name].register_forward_hook(
            lambda _m, _i, out, key=perm_name: store[key].append(out.detach())))
    try:
        with torch.no_grad():
            for start in range(0, len(inputs), batch):
                model(inputs[start:start + batch])
    finally:
        for hook in hooks:
            hook.remove()
    return {k: torch.cat(v) for k, v in store.items()}


def ste_matching(model, spec, state_a, state_b, batches, loss_fn, lr=1e-2, momentum=0.9, seed=0):
    """Algorithm 2 (straight-through estimator): the permutation of B whose midpoint with A had the lowest loss.

    Free parameters start at theta_a. On each batch: pi = weight_matching(theta_free -> theta_b), warm-started from
    the last pi; the forward pass uses the midpoint 1/2 (theta_a + pi(theta_b)), with the projection's gradient passed
    straight through to theta_free; SGD with momentum updates theta_free. Entries outside the spec (none, for
    models whose every parameter is permuted) are averaged as they are. Returns (pi, the per-batch losses).
    """
    keys = [k for k, v in state_a.items() if v.is_floating_point()]
    free = {k: state_a[k].detach().clone().requires_grad_(True) for k in keys}
    optimizer = torch.optim.SGD(list(free.values()), lr=lr, momentum=momentum)
    perm, best, best_loss, losses = None, None, float("inf"), []
    for inputs, targets in batches:
        with torch.no_grad():
            perm, _ = weight_matching(spec, {k: free[k].detach() for k in keys}, state_b, init=perm, seed=seed)
            projected = apply_permutation(spec, perm, state_b)
        straight = {k: projected[k] + free[k] - free[k].detach() for k in keys}
        params = {**state_a, **{k: 0.5 * (state_a[k] + straight[k]) for k in keys}}
        loss = loss_fn(functional_call(model, params, (inputs,)), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        if losses[-1] < best_loss:
            best, best_loss = {k: v.clone() for k, v in perm.items()}, losses[-1]
    return best, losses
