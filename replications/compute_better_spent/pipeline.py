"""compute_better_spent: the Python side of its workflow. See shared/pipeline/paper.py.

data (the registry's mnist_5k, or cifar10 at the full tier) -> tune (the base lr: dense at the base width on a
small grid) -> train (one job per arm: structure-aware and naive lr, every structure and width) -> analyses
(scaling: loss against compute and the fitted exponents; identities: counts, explicit matrices, init norms)
-> figures -> report. The layer benchmark (step benchmark) is run by `snakemake benchmarks` only.
"""
import math

from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

ARMS = ("aware", "naive")
STRUCTURES = ("dense", "btt", "monarch", "kronecker", "low_rank")
EXPANSION = 4  # model.EXPANSION, restated so that parsing imports no torch

RESOURCES = {
    "tune": Resources(gpu=True, threads=4, mem_mb=8000, runtime=120),
    "train": Resources(gpu=True, threads=4, mem_mb=16000, runtime=1440),
    "analyze": Resources(),
    "benchmark": Resources(gpu=True, runtime=30),  # one thread on CPU, as the quick tier trains
}
BENCHMARKS = ("compute_better_spent",)  # results/benchmarks/compute_better_spent.json: step benchmark


def check(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    if problem := shape_mismatch(cfg["dataset"], {key: cfg[key] for key in ("d_input", "n_classes")}):
        raise ConfigError(problem)
    train = image_facts(cfg["dataset"])["n_train"]
    if cfg["batch_size"] > train:
        raise ConfigError(f"'batch_size': {cfg['batch_size']} exceeds the {train} training images (allowed: 1 .. {train})")
    widths = cfg["widths"]
    for s in STRUCTURES:
        if s not in widths:
            raise ConfigError(f"'widths': structure {s!r} is missing (allowed: every one of {', '.join(STRUCTURES)})")
        if len(widths[s]) < 3:
            raise ConfigError(f"'widths.{s}': {widths[s]} has fewer than 3 widths, and a fitted exponent with an "
                              f"uncertainty needs 3 (allowed: 3 or more widths)")
    b = cfg["model"]["monarch_blocks"]
    for w in widths["monarch"] + [cfg["base_width"]]:
        if w % b:
            raise ConfigError(f"'widths.monarch': width {w} is not divisible by monarch_blocks = {b} "
                              f"(allowed: multiples of {b}; the base width too)")
    for s in ("btt", "kronecker", "low_rank"):
        for w in widths[s]:
            if math.isqrt(w) ** 2 != w:
                raise ConfigError(f"'widths.{s}': {w} is not a perfect square (allowed: perfect squares, so that "
                                  f"the factorisation is the paper's square one)")


def data_path(cfg):
    return f"data/prepared/{cfg['dataset']}.safetensors"


def tune_path(paper):
    return paper.out("models/tune.json")


def history_path(paper, arm):
    return paper.out(f"models/{arm}.json")


def train_params(cfg):
    keys = ("d_input", "n_classes", "model", "batch_size", "steps", "label_smoothing", "tail", "seeds", "base_width",
            "device")
    return {k: cfg[k] for k in keys}


def steps(paper):
    cfg, data = paper.cfg, {"data": data_path(paper.cfg)}
    return [
        Step("tune", script="tune", priority=2, inputs=data, outputs={"out": tune_path(paper)},
             params={**train_params(cfg), "lr_grid": cfg["lr_grid"]}),
        Step("train", script="train", priority=1, wildcards={"arm": "|".join(ARMS)},
             inputs={**data, "lr": tune_path(paper)}, outputs={"out": history_path(paper, "{arm}")},
             params=lambda w: {**train_params(cfg), "arm": w.arm, "widths": cfg["widths"]}),
        # BTT and Monarch FLOP/s over dense at equal FLOPs (never part of the default run; `snakemake benchmarks`)
        Step("benchmark", script="benchmark", outputs={"out": "results/benchmarks/compute_better_spent.json"},
             params={"device": cfg["device"], **cfg["benchmark"]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    return [
        Analysis("scaling", script="analyze_scaling",
                 reads={"aware": history_path(paper, "aware"), "naive": history_path(paper, "naive"),
                        "tune": tune_path(paper)},
                 params={}, figures=("scaling",)),
        Analysis("identities", script="analyze_identities", reads={},
                 params={"widths": cfg["widths"], "model": cfg["model"], "d_input": cfg["d_input"],
                         "n_classes": cfg["n_classes"], "seed": cfg["seeds"][0],
                         **cfg["analysis"]},
                 figures=("init_norms",)),
    ]
