"""layer_rotation: the Python side of its workflow. See shared/pipeline/paper.py.

data (the registry's mnist_5k; mnist at the full tier) -> train (one job per group: grid, Layca-SGD over the
per-layer rate profile alpha and the rate rho(0), section 4; standard, SGD at three learning rates with and without
weight decay, Adam and Adam + Layca, section 5; mnist, section 6's 784-784-10 MLP under Layca-SGD at four rates)
-> one analysis per group -> figures -> report.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

GROUPS = ("grid", "standard", "mnist")  # common.GROUPS, restated so that parsing imports no torch
FIGURES = {"grid": ("grid",), "standard": ("curves",), "mnist": ("mnist",)}
WHAT = {"grid": "the Layca alpha x rho(0) grid", "standard": "the SGD / Adam runs", "mnist": "section 6's MNIST MLP"}

RESOURCES = {
    "train": Resources(gpu=True, threads=1, mem_mb=4000, runtime=240),  # small MLPs, one run after another
    "analyze": Resources(gpu=False, threads=1, mem_mb=4000, runtime=30),
}


def check(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    if problem := shape_mismatch(cfg["dataset"], {"d_input": cfg["d_input"], "n_classes": cfg["n_classes"]}):
        raise ConfigError(problem)
    train = image_facts(cfg["dataset"])["n_train"]
    if cfg["per_class"]:
        train = min(train, cfg["per_class"] * cfg["n_classes"])
    for group in GROUPS:
        if cfg[group]["batch_size"] > train:
            raise ConfigError(f"'{group}.batch_size': {cfg[group]['batch_size']} exceeds the {train} training images "
                              f"(allowed: 1 .. {train})")
    g = cfg["grid"]
    if 0 not in g["alphas"] or len(g["alphas"]) < 3 or not (min(g["alphas"]) < 0 < max(g["alphas"])):
        raise ConfigError(f"'grid.alphas': {g['alphas']} must hold 0 and values on both sides of it (claim "
                          f"R2-balanced compares alpha = 0 with the extremes)")
    if len(g["exponents"]) * len(g["alphas"]) < 6:
        raise ConfigError(f"'grid.exponents': {g['exponents']} x {len(g['alphas'])} alphas gives fewer than 6 runs "
                          f"(allowed: at least 6, for a rank correlation)")
    s = cfg["standard"]
    if len(s["sgd_exponents"]) < 2:
        raise ConfigError(f"'standard.sgd_exponents': {s['sgd_exponents']} (allowed: at least two SGD rates)")
    m = cfg["mnist"]
    if len(m["exponents"]) < 2:
        raise ConfigError(f"'mnist.exponents': {m['exponents']} (allowed: at least two rates)")


def data_path(cfg):
    return f"data/prepared/{cfg['dataset']}.safetensors"


def train_params(cfg, group):
    """The slice of the config one group's training reads: the other groups' settings retrain nothing here."""
    keys = ("device", "dataset", "per_class", "d_input", "n_classes")
    return {"group": group, **{k: cfg[k] for k in keys}, group: cfg[group]}


def steps(paper):
    cfg = paper.cfg
    groups = [g for g in GROUPS if cfg[g]["run"]]
    if not groups:
        return []
    return [Step("train", script="train", priority=1, wildcards={"group": "|".join(groups)},
                 inputs={"data": data_path(cfg)}, outputs=paper.model_files("{group}"),
                 params=lambda w: train_params(cfg, w.group))]


def analyses(paper):
    cfg = paper.cfg
    return [Analysis(group, script=f"analyze_{group}", reads={**paper.model_files(group), "data": data_path(cfg)},
                     params={"per_class": cfg["per_class"], group: cfg[group], "analysis": cfg["analysis"]},
                     figures=FIGURES[group],
                     not_run="" if cfg[group]["run"] else f"{WHAT[group]} is not run in this config ({group}.run: "
                                                          f"false)")
            for group in GROUPS]
