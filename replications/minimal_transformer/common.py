"""What this paper's scripts share: the arms (which attention form, with or without the MLP), their run specs with
declared parameter counts, the image data, and the training loop (Adam, cross-entropy, cosine per step)."""

from shared.data.images import load_images
from shared.nn.minimal_attention import count_parameters
from shared.train.classifier import fit_classifier

# (arm, qk form, vo form, keeps the MLP, has attention blocks)
ARMS = (
    ("original", "separate", "separate", True, True),           # the full block: W_Q, W_K, W_V, W_O and the MLP
    ("no_mlp", "separate", "separate", False, True),            # (a) without MLP
    ("no_mlp_wqk", "collapsed", "separate", False, True),       # (b) W_Q^T W_K collapsed into W_QK
    ("no_mlp_wqk_wvo", "collapsed", "collapsed", False, True),  # (b) and W_O W_V collapsed into W_VO
    ("no_mlp_wqk_novo", "collapsed", "identity", False, True),  # (b) and W_V, W_O omitted
    ("no_mlp_sym_novo", "symmetric", "identity", False, True),  # (c) symmetric W_QK (T + T^T - diag T), VO omitted
    ("no_mlp_psd_novo", "psd", "identity", False, True),        # (c) symmetric PSD W_QK = T T^T, VO omitted
    ("embed_only", "separate", "separate", False, False),       # control: no attention block at all
)
REDUCED = tuple(arm for arm, *_, blocks in ARMS if arm != "original" and blocks)


def specs(params):
    """One run spec per arm and seed of an experiment (params: the train step's slice of the config)."""
    e, m = params["spec"], params["model"]
    out = []
    for arm, qk, vo, mlp, blocks in ARMS:
        kw = {"image_size": e["image_size"], "channels": e["channels"], "patch": e["patch"], "d": e["d"],
              "n_layer": e["n_layer"] if blocks else 0, "n_head": m["n_head"], "n_classes": 10, "qk": qk, "vo": vo,
              "mlp_ratio": m["mlp_ratio"] if mlp else 0}
        out += [{"name": f"{arm}-seed{seed}", "arm": arm, "seed": seed, **kw, "params": count_parameters(**kw)}
                for seed in e["seeds"]]
    return out


def load_data(path):
    """Images (N, C, H, W), standardised per channel by the training set's mean and std."""
    data = load_images(path, layout="chw")
    mean = data["x_train"].mean((0, 2, 3), keepdim=True)
    std = data["x_train"].std((0, 2, 3), keepdim=True)
    for split in ("train", "test"):
        data[f"x_{split}"] = (data[f"x_{split}"] - mean) / std
    return data


def train_classifier(model, data, t, epochs, generator, device):
    """Adam (lr t["lr"]), cross-entropy, a fresh permutation per epoch from `generator`, cosine per step; the mean
    training loss per epoch (shared.train.classifier)."""
    return fit_classifier(model, data["x_train"], data["y_train"], batch_size=t["batch_size"], epochs=epochs,
                          lr=t["lr"], generator=generator, device=device)
