"""What this paper's scripts share: the prepared images, the trained models, and the interpolation curves
between two models (loss and accuracy on the train and test sets at each lambda) with their barriers."""
import numpy as np
import torch

from shared.data.images import load_images
from shared.nn.interpolation import barrier, loss_curve
from shared.nn.permutation import activation_matching, apply_permutation, collect_activations, weight_matching
from shared.train.supervised import evaluate

SPLITS = ("train", "test")
EVAL_CHUNK = 4096  # images per forward pass when evaluating (the loss is summed per chunk in float32)


def load_data(path):
    """Prepared dataset -> float32 inputs (N, pixels) in [0, 1] (divided by 255 only, as the paper's MNIST code) and
    int64 labels."""
    return load_images(path, layout="hwc_flat")


def lambdas(n):
    """The interpolation grid: n points from 0 to 1 (the paper's code: jnp.linspace(0, 1, 25))."""
    return torch.linspace(0, 1, n)


def curves(model, state_a, state_b, lams, data):
    """{f"{split}_{loss|acc}": array over lams} along (1 - lam) A + lam B. The model is left with B's weights."""
    def measure(m):
        return {split: evaluate(m, data[f"x_{split}"], data[f"y_{split}"], chunk=EVAL_CHUNK) for split in SPLITS}
    points = loss_curve(model, state_a, state_b, [float(t) for t in lams], measure)
    return {f"{split}_{q}": np.array([p[split][i] for p in points])
            for split in SPLITS for i, q in enumerate(("loss", "acc"))}


def ratio(barrier_after, barrier_naive):
    """barrier_after / barrier_naive; NaN (a failed value in the metrics) when the naive path has no barrier."""
    return barrier_after / barrier_naive if barrier_naive > 0 else float("nan")


def summarise(curve, lams, prefix):
    """Barriers (mean form: the paper's definition; chord form), on loss and on error (1 - accuracy), and the
    midpoint accuracy, as metrics named <prefix>_<...>."""
    lams = [float(t) for t in lams]
    mid = int(np.argmin(np.abs(np.array(lams) - 0.5)))
    m = {}
    for split in SPLITS:
        loss, err = curve[f"{split}_loss"], 1 - curve[f"{split}_acc"]
        m[f"{prefix}_{split}_barrier"] = barrier(loss, lams, form="mean")
        m[f"{prefix}_{split}_barrier_chord"] = barrier(loss, lams, form="chord")
        m[f"{prefix}_{split}_err_barrier"] = barrier(err, lams, form="mean")
        m[f"{prefix}_{split}_mid_acc"] = float(curve[f"{split}_acc"][mid])
    return m


def match(method, model, spec, state_a, state_b, data, p):
    """(pi(B)'s state, info) for method naive (identity), wm (weight matching) or am (activation matching)."""
    if method == "naive":
        return state_b, {}
    if method == "wm":
        perm, sweeps = weight_matching(spec, state_a, state_b, max_sweeps=p["wm_max_sweeps"], seed=p["match_seed"])
        return apply_permutation(spec, perm, state_b), {"sweeps": sweeps}
    if method == "am":
        x = data["x_train"] if not p["am_samples"] else data["x_train"][:p["am_samples"]]
        acts = {}
        for name, state in (("a", state_a), ("b", state_b)):
            model.load_state_dict(state)
            acts[name] = collect_activations(model, x, model.activation_modules())
        return apply_permutation(spec, activation_matching(acts["a"], acts["b"]), state_b), {"samples": len(x)}
    raise ValueError(f"unknown matching method {method!r}")


def pair(models, specs, width, kind="relu"):
    """(model A, model B): the two final models of a width, seeds in increasing order."""
    names = sorted((n for n, s in specs.items() if s["d_hidden"] == width and s.get("kind", "relu") == kind
                    and s.get("epoch") is None), key=lambda n: specs[n]["seed"])
    if len(names) < 2:
        raise ValueError(f"need two models of width {width} ({kind}), found {names}")
    return models[names[0]], models[names[1]]
