"""layer_benchmark: the Python side of its workflow. See shared/pipeline/paper.py.

One train job per task (every registered layer family at matched parameters and multiply-adds, lr sweep, seeds,
throughput), then one analysis over all tasks: the leaderboard, the cross-paper comparisons the claims read, and
the Pareto figures.
"""
from shared.data.registry import REGISTRY, image_facts
from shared.nn.layer_registry import families, family
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

from .common import REFERENCE, benchmarked, plan

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=240),
    "data": Resources(gpu=False, threads=1, mem_mb=2000, runtime=10),
    "analyze": Resources(gpu=False, threads=1, mem_mb=4000, runtime=30),
}
DIGITS = {"d": 64, "classes": 10}  # prepare_digits's 8x8 digits (not a registry dataset)


def image_shape(dataset):
    """{d, classes} of an image task's dataset."""
    if dataset == "digits":
        return DIGITS
    facts = image_facts(dataset)
    return {"d": facts["d_input"], "classes": facts["n_classes"]}


def check(cfg):
    """Cross-key checks: excluded families exist and are not the reference; hyperparameters name real ones; image
    tasks agree with their data; every task's plan can be built (a width grid a family cannot take fails here)."""
    names = families()
    for name in [*cfg["exclude"], *cfg["hyper"]]:
        if name not in names:
            raise ConfigError(f"'exclude' / 'hyper': {name!r} is not a registered layer family (allowed: {sorted(names)})")
    if REFERENCE in cfg["exclude"]:
        raise ConfigError(f"'exclude': {REFERENCE!r} is the reference every budget and speed is relative to")
    for name, hyper in cfg["hyper"].items():
        unknown = set(hyper) - set(family(name).hyper)
        if unknown:
            raise ConfigError(f"'hyper.{name}': unknown hyperparameter(s) {sorted(unknown)} "
                              f"(allowed: {sorted(family(name).hyper)})")
    for task, t in cfg["tasks"].items():
        if t["kind"] == "image":
            for key, wanted in image_shape(t["dataset"]).items():
                if t[key] != wanted:
                    raise ConfigError(f"'tasks.{task}.{key}': {t[key]} does not match dataset {t['dataset']!r} "
                                      f"(allowed: {wanted})")
        if t["kind"] == "lm" and t["d"] % t["n_head"]:
            raise ConfigError(f"'tasks.{task}.n_head': {t['n_head']} does not divide d = {t['d']}")
        if t["kind"] == "lm" and REGISTRY[t["dataset"]].kind != "text":
            raise ConfigError(f"'tasks.{task}.dataset': {t['dataset']!r} is not a text dataset")
        try:
            plan(cfg, task)
        except ValueError as error:
            raise ConfigError(f"'widths': task {task!r}: {error}") from None
    for role, task in cfg["claims"].items():
        kind = "lm" if role == "lm" else "image"
        if task not in cfg["tasks"] or cfg["tasks"][task]["kind"] != kind:
            raise ConfigError(f"'claims.{role}': {task!r} is not a task of kind {kind!r} "
                              f"(allowed: {sorted(k for k, t in cfg['tasks'].items() if t['kind'] == kind)})")
    if len(benchmarked(cfg)) < 2:
        raise ConfigError("'exclude': at least the reference and one other family must be benchmarked")


def data_path(paper, task):
    t = paper.cfg["tasks"][task]
    if t["kind"] == "regression":
        return []  # generated in train.py
    if t.get("dataset") == "digits":
        return paper.out("data/digits.safetensors")
    return f"data/prepared/{t['dataset']}.safetensors"


def results_path(paper, task="{task}"):
    return paper.out(f"models/{task}.json")


def steps(paper):
    cfg = paper.cfg
    shared = {k: cfg[k] for k in ("device", "seeds", "widths", "exclude", "hyper", "timing")}
    out = [Step("train", script="train", priority=1, wildcards={"task": "|".join(cfg["tasks"])},
                inputs={"data": lambda w: data_path(paper, w.task)}, outputs={"results": results_path(paper)},
                # this task's slice only, so editing another task retrains nothing here
                params=lambda w: {**shared, "task": w.task, "tasks": {w.task: cfg["tasks"][w.task]}})]
    digits = [t for t in cfg["tasks"].values() if t.get("dataset") == "digits"]
    if digits:
        out.append(Step("data", script="prepare_data", outputs={"out": paper.out("data/digits.safetensors")},
                        params={"test_fraction": digits[0]["test_fraction"]}))
    return out


def analyses(paper):
    cfg = paper.cfg
    return [Analysis("benchmark", script="analyze", reads={"results": [results_path(paper, t) for t in cfg["tasks"]]},
                     params={k: cfg[k] for k in ("tasks", "claims", "seeds", "exclude")},
                     figures=("vs_params", "vs_macs", "vs_time", "leaderboard"))]
