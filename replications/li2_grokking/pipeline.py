"""li2_grokking: the Python side of its workflow. See shared/pipeline/paper.py.

Training jobs (each one stacked train_full_batch call per network width): `grok` (eta on/off with the stage
statistics recorded along the way), `width` (eta = 0 at widths around n) and `scaling<M>` (one per group order M:
every (training fraction, seed) member of the Fig. 5 sweep). Two analyses read them: `grokking` (Fig. 3, the
features, the stages, the width test) and `scaling` (success rates, boundaries, the fitted exponent).
"""
import math

from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=16000, runtime=120),
    "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=30),
}
EXPERIMENT_PATTERN = r"grok|width|scaling\d+"


def experiments(cfg):
    return ["grok", "width", *(f"scaling{m}" for m in cfg["scaling"]["orders"])]


def check(cfg):
    """Cross-key checks: the grok run has an eta = 0 arm and one eta > 0 arm; every fraction is a valid split."""
    etas = cfg["grok"]["etas"]
    if 0.0 not in etas or not any(e > 0 for e in etas):
        raise ConfigError(f"'grok.etas': {etas} needs 0 and at least one eta > 0 (allowed: e.g. [0.0, 2.0e-4])")
    for m in cfg["scaling"]["orders"]:
        for mult in cfg["scaling"]["multipliers"]:
            p = mult * cfg["critical_c"] * math.log(m) / m
            if round(p * m * m) < 1:
                raise ConfigError(f"'scaling.multipliers': {mult} x p* gives no training pair at M = {m} "
                                  f"(allowed: a fraction >= 1 / M^2)")
    if len(cfg["scaling"]["multipliers"]) < 2:
        raise ConfigError("'scaling.multipliers': need at least 2 (allowed: a list of >= 2 values)")


def checkpoint_path(paper, experiment):
    return paper.model_files(experiment)["checkpoint"]


def history_path(paper, experiment):
    return paper.model_files(experiment)["history"]


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train", script="train", priority=1, wildcards={"experiment": EXPERIMENT_PATTERN},
             outputs=paper.model_files("{experiment}"),
             # only this experiment's slice of the config, so editing another experiment does not retrain this one
             params=lambda w: {"experiment": w.experiment,
                               **{k: cfg[k] for k in ("device", "activation", "lr", "critical_c")},
                               "analysis": cfg["analysis"],
                               "section": cfg["scaling" if w.experiment.startswith("scaling") else w.experiment]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    scaling = [f"scaling{m}" for m in cfg["scaling"]["orders"]]
    return [
        Analysis("grokking", script="analyze_grokking",
                 reads={"grok": checkpoint_path(paper, "grok"), "grok_history": history_path(paper, "grok"),
                        "width": checkpoint_path(paper, "width"), "width_history": history_path(paper, "width")},
                 params={**cfg["analysis"], "grok": cfg["grok"], "width": cfg["width"]},
                 figures=("grokking", "stages", "width", "features")),
        Analysis("scaling", script="analyze_scaling",
                 reads={"histories": [history_path(paper, e) for e in scaling]},
                 params={**cfg["analysis"], "scaling": cfg["scaling"], "critical_c": cfg["critical_c"]},
                 figures=("scaling",)),
    ]
