"""mlp_mixer_wide_sparse: the Python side of its workflow. See shared/pipeline/paper.py.

data (the registry's mnist_5k; cifar10 at the full tier) -> train_compare (Mixer, RP-Mixer, SW-MLP, dense, no
block at one (S, C)) and train_sweep (Mixers at several (S, C) of equal mixing parameters) -> analyses: compare,
sweep, and linear (the linear algebra and the implicit sparsity of a linear Mixer, trained inside the analysis: a
few seconds of float64 gradient descent on 8 x 8 matrices).
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

GROUPS = ("compare", "sweep")  # common.GROUPS, restated so that parsing imports no torch

RESOURCES = {
    "train_compare": Resources(gpu=True, threads=4, mem_mb=16000, runtime=600),
    "train_sweep": Resources(gpu=True, threads=4, mem_mb=16000, runtime=600),
    "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=30),
}


def mixing_params(tokens, channels, expansion):
    """model.mixer_block_params, restated without torch."""
    return sum(2 * expansion * n * n + expansion * n + n for n in (tokens, channels))


def check(cfg):
    """Cross-key checks: the data agree with the config, the patches tile the image, the sweep's configurations
    have equal mixing parameters (within 5%) and one widest S C, and the dense linear fit is underdetermined."""
    if problem := shape_mismatch(cfg["dataset"], {"image_shape": cfg["image_shape"], "n_classes": cfg["n_classes"]}):
        raise ConfigError(problem)
    size = cfg["image_shape"][1]
    sweep = cfg["sweep"]["configs"]
    for key, patches in (("compare.patch", [cfg["compare"]["patch"]]), ("sweep.configs", [p for p, _ in sweep])):
        if bad := [p for p in patches if size % p]:
            raise ConfigError(f"'{key}': patch {bad[0]} does not tile {size}-pixel images (allowed: a divisor of "
                              f"{size})")
    params = [mixing_params((size // p) ** 2, c, cfg["sweep"]["expansion"]) for p, c in sweep]
    if max(params) > 1.05 * min(params):
        raise ConfigError(f"'sweep.configs': {sweep} give mixing-layer parameters {params}, more than 5% apart "
                          f"(allowed: (patch, channels) pairs with S^2 + C^2 about equal, S = ({size}/patch)^2)")
    widths = sorted((size // p) ** 2 * c for p, c in sweep)
    if len(widths) < 3 or widths[-1] == widths[-2]:
        raise ConfigError(f"'sweep.configs': {sweep} need at least 3 configurations and one widest S C "
                          f"(effective widths {widths})")
    lin = cfg["linear"]
    if lin["samples"] >= lin["size"] ** 2:
        raise ConfigError(f"'linear.samples': {lin['samples']} makes the dense fit determined (allowed: "
                          f"1 .. {lin['size'] ** 2 - 1}, fewer than the {lin['size'] ** 2} inputs of vec(X))")
    train = image_facts(cfg["dataset"])["n_train"]
    if cfg["train"]["batch_size"] > train:
        raise ConfigError(f"'train.batch_size': {cfg['train']['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")


def data_path(cfg):
    return f"data/prepared/{cfg['dataset']}.safetensors"


def train_params(cfg, group):
    """The slice of the config one group's training reads: the other group's settings retrain nothing here."""
    keys = ("device", "image_shape", "n_classes", "act", "depth", "seeds", "train", group)
    return {"group": group, **{k: cfg[k] for k in keys}}


def steps(paper):
    cfg = paper.cfg
    return [Step(f"train_{group}", script="train_images", priority=1, inputs={"data": data_path(cfg)},
                 outputs=paper.model_files(group), params=train_params(cfg, group)) for group in GROUPS]


def analyses(paper):
    cfg = paper.cfg
    return [
        Analysis("compare", script="analyze_compare", reads={**paper.model_files("compare"), "data": data_path(cfg)},
                 params={"identity_inputs": cfg["identity_inputs"]}, figures=("compare",)),
        Analysis("sweep", script="analyze_sweep", reads={**paper.model_files("sweep"), "data": data_path(cfg)},
                 figures=("sweep",)),
        Analysis("linear", script="analyze_linear", params={"linear": cfg["linear"]}),
    ]
