"""Linear interpolation between two models' weights, whole-model or layer-wise, and the loss barrier along it.

  * interpolate(a, b, lam, keys): (1 - lam) a + lam b on `keys` (all floating-point entries by default), the rest
    of the state taken from `base` (a, or b). Layer-wise LMC (Adilova et al., 2024) moves one layer group at a time.
  * layer_groups(state): the state_dict keys grouped by the module that owns them ("block.0.fc.weight" and
    ".bias" -> "block.0.fc"), in order: the unit the layer-wise paper averages.
  * barrier(curve, lams): in its two published forms. "mean" (Frankle et al.; Git Re-Basin's definition):
    max_lam L(lam) - (L(0) + L(1)) / 2, which is >= 0 whenever the endpoints are on the grid. "chord":
    max_lam L(lam) - ((1 - lam) L(0) + lam L(1)), the height above the straight line; the two agree when
    L(0) = L(1). `reference` replaces the endpoints' mean, as the layer-wise paper measures a one-layer path against
    the two full models.
"""
import torch

FORMS = ("mean", "chord")


def copy_state(source):
    """A copy of a state_dict (or of a model's) that no later load_state_dict can overwrite: model.state_dict()
    shares storage with the parameters, so loading another state into the model changes a state taken without it."""
    state = source.state_dict() if hasattr(source, "state_dict") else source
    return {k: v.detach().clone() for k, v in state.items()}


def layer_groups(state):
    """{module name: [keys]} in state_dict order; a key without a dot is its own group."""
    groups = {}
    for key in state:
        groups.setdefault(key.rsplit(".", 1)[0] if "." in key else key, []).append(key)
    return groups


def random_direction_like(state, keys, norm, generator):
    """{key: float64 tensor}: a Gaussian direction over the entries `keys` of `state`, scaled to total norm `norm`
    (a random move of the same size as a given one, e.g. along one layer group)."""
    noise = {k: torch.randn(state[k].shape, generator=generator, dtype=torch.float64) for k in keys}
    scale = norm / torch.cat([v.flatten() for v in noise.values()]).norm()
    return {k: v * scale for k, v in noise.items()}


def interpolate(state_a, state_b, lam, keys=None, base="a"):
    """A state_dict: keys (default: every floating-point entry) at (1 - lam) a + lam b, the others from `base`."""
    if base not in ("a", "b"):
        raise ValueError(f"base must be 'a' or 'b', got {base!r}")
    keys = set(k for k, v in state_a.items() if v.is_floating_point()) if keys is None else set(keys)
    unknown = keys - set(state_a)
    if unknown:
        raise KeyError(f"not in the state_dict: {sorted(unknown)}")
    out = dict(state_a if base == "a" else state_b)
    for key in keys:
        out[key] = torch.lerp(state_a[key], state_b[key].to(state_a[key].dtype), float(lam))
    return out


def loss_curve(model, state_a, state_b, lams, evaluate, keys=None, base="a"):
    """[evaluate(model) for each lam], without gradients, the model loaded with interpolate(a, b, lam, keys, base).

    The endpoints are copied first, so model.state_dict() itself may be passed as either; the model keeps the last
    point's weights."""
    state_a, state_b, out = copy_state(state_a), copy_state(state_b), []
    with torch.no_grad():
        for lam in lams:
            model.load_state_dict(interpolate(state_a, state_b, lam, keys, base))
            out.append(evaluate(model))
    return out


def barrier(curve, lams, form="mean", reference=None):
    """The barrier of losses `curve` at interpolation points `lams` (which include 0 and 1 unless reference is given)."""
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {form!r}")
    curve, lams = [float(c) for c in curve], [float(t) for t in lams]
    if len(curve) != len(lams):
        raise ValueError(f"{len(curve)} losses for {len(lams)} interpolation points")
    if reference is not None:
        if form != "mean":
            raise ValueError("a reference level replaces the endpoints' mean: form='mean' only")
        return max(curve) - float(reference)
    if lams[0] != 0.0 or lams[-1] != 1.0:
        raise ValueError("the interpolation points must start at 0 and end at 1")
    start, end = curve[0], curve[-1]
    if form == "mean":
        return max(curve) - 0.5 * (start + end)
    return max(c - ((1 - t) * start + t * end) for c, t in zip(curve, lams))
