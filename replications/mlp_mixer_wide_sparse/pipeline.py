"""mlp_mixer_wide_sparse: the Python side of its workflow. See shared/pipeline/paper.py.

data (the registry's mnist_5k; cifar10 at the full tier) -> train_compare (Mixer, RP-Mixer, SW-MLP, dense, no
block at one (S, C)) and train_sweep (Mixers at several (S, C) of equal mixing parameters) -> analyses: compare,
sweep, and linear (the linear algebra and the implicit sparsity of a linear Mixer, trained inside the analysis: a
few seconds of float64 gradient descent on 8 x 8 matrices). The two image experiments run again on scikit-learn's
8x8 digits (data_digits -> train_digits_compare, train_digits_sweep -> digits_compare, digits_sweep), both tiers.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

GROUPS = ("compare", "sweep")  # common.GROUPS, restated so that parsing imports no torch

RESOURCES = {
    "data_digits": Resources(gpu=False, threads=1, mem_mb=2000, runtime=10),
    "train_compare": Resources(gpu=True, threads=4, mem_mb=16000, runtime=600),
    "train_sweep": Resources(gpu=True, threads=4, mem_mb=16000, runtime=600),
    "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=30),
}


def mixing_params(tokens, channels, expansion):
    """model.mixer_block_params, restated without torch."""
    return sum(2 * expansion * n * n + expansion * n + n for n in (tokens, channels))


DIGITS = {"image_shape": [1, 8, 8], "n_classes": 10, "images": 1797}  # scikit-learn's digits (prepare_data.py)


def check_experiments(size, compare, sweep, batch_size, train, prefix=""):
    """The patches tile `size`-pixel images, the sweep's configurations have equal mixing parameters (within 5%)
    and one widest S C, and a batch fits in the `train` training images; keys named under `prefix`."""
    configs = sweep["configs"]
    for key, patches in (("compare.patch", [compare["patch"]]), ("sweep.configs", [p for p, _ in configs])):
        if bad := [p for p in patches if size % p]:
            raise ConfigError(f"'{prefix}{key}': patch {bad[0]} does not tile {size}-pixel images (allowed: a divisor "
                              f"of {size})")
    params = [mixing_params((size // p) ** 2, c, sweep["expansion"]) for p, c in configs]
    if max(params) > 1.05 * min(params):
        raise ConfigError(f"'{prefix}sweep.configs': {configs} give mixing-layer parameters {params}, more than 5% "
                          f"apart (allowed: (patch, channels) pairs with S^2 + C^2 about equal, S = ({size}/patch)^2)")
    widths = sorted((size // p) ** 2 * c for p, c in configs)
    if len(widths) < 3 or widths[-1] == widths[-2]:
        raise ConfigError(f"'{prefix}sweep.configs': {configs} need at least 3 configurations and one widest S C "
                          f"(effective widths {widths})")
    if batch_size > train:
        raise ConfigError(f"'{prefix}train.batch_size': {batch_size} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")


def check(cfg):
    """Cross-key checks: the data agree with the config; both image experiments (MNIST-5k or the full tier's data,
    and the digits) pass check_experiments; the dense linear fit is underdetermined."""
    if problem := shape_mismatch(cfg["dataset"], {"image_shape": cfg["image_shape"], "n_classes": cfg["n_classes"]}):
        raise ConfigError(problem)
    check_experiments(cfg["image_shape"][1], cfg["compare"], cfg["sweep"], cfg["train"]["batch_size"],
                      image_facts(cfg["dataset"])["n_train"])
    d = cfg["digits"]
    check_experiments(DIGITS["image_shape"][1], d["compare"], d["sweep"], d["train"]["batch_size"],
                      int(DIGITS["images"] * (1 - d["test_fraction"])), prefix="digits.")
    lin = cfg["linear"]
    if lin["samples"] >= lin["size"] ** 2:
        raise ConfigError(f"'linear.samples': {lin['samples']} makes the dense fit determined (allowed: "
                          f"1 .. {lin['size'] ** 2 - 1}, fewer than the {lin['size'] ** 2} inputs of vec(X))")


def data_path(cfg):
    return f"data/prepared/{cfg['dataset']}.safetensors"


def digits_path(paper):
    return paper.out("data/digits.safetensors")


def train_params(cfg, group):
    """The slice of the config one group's training reads: the other group's settings retrain nothing here."""
    keys = ("device", "image_shape", "n_classes", "act", "depth", "seeds", "train", group)
    return {"group": group, **{k: cfg[k] for k in keys}}


def digits_params(cfg, group):
    """train_params for the digits: their shape, depth, seeds, training and `group` settings."""
    d = cfg["digits"]
    return {"group": group, "device": cfg["device"], "image_shape": DIGITS["image_shape"],
            "n_classes": DIGITS["n_classes"], "act": cfg["act"], "depth": d["depth"], "seeds": d["seeds"],
            "train": d["train"], group: d[group]}


def steps(paper):
    cfg = paper.cfg
    return [*(Step(f"train_{group}", script="train_images", priority=1, inputs={"data": data_path(cfg)},
                   outputs=paper.model_files(group), params=train_params(cfg, group)) for group in GROUPS),
            Step("data_digits", script="prepare_data", outputs={"out": digits_path(paper)},
                 params={"dataset": "digits", "test_fraction": cfg["digits"]["test_fraction"]}),
            *(Step(f"train_digits_{group}", script="train_images", priority=1, inputs={"data": digits_path(paper)},
                   outputs=paper.model_files(f"digits_{group}"), params=digits_params(cfg, group),
                   resources=f"train_{group}") for group in GROUPS)]


def analyses(paper):
    cfg = paper.cfg
    return [
        Analysis("compare", script="analyze_compare", reads={**paper.model_files("compare"), "data": data_path(cfg)},
                 params={"identity_inputs": cfg["identity_inputs"]}, figures=("compare",)),
        Analysis("sweep", script="analyze_sweep", reads={**paper.model_files("sweep"), "data": data_path(cfg)},
                 figures=("sweep",)),
        Analysis("linear", script="analyze_linear", params={"linear": cfg["linear"]}),
        Analysis("digits_compare", script="analyze_compare",
                 reads={**paper.model_files("digits_compare"), "data": digits_path(paper)},
                 params={"identity_inputs": cfg["identity_inputs"]}, figures=("compare",)),
        Analysis("digits_sweep", script="analyze_sweep",
                 reads={**paper.model_files("digits_sweep"), "data": digits_path(paper)}, figures=("sweep",)),
    ]
