"""mup_lr_transfer: the Python side of its workflow. See shared/pipeline/paper.py.

Two training jobs (one-step sweeps of muP / SP / NTP over widths and seeds; t-step sweeps under muP), then two
analyses: the one-step optimum against eta*_inf and the width trends, and the t-step argmin across widths.
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

from .common import EXPERIMENTS

RESOURCES = {
    "train": Resources(gpu=True, threads=1, mem_mb=16000, runtime=240),  # full: n = 16384, float64 n x n matrices
    "analyze": Resources(gpu=False, threads=1, mem_mb=4000, runtime=30),
}


def check(cfg):
    """Cross-key checks: the depth, widths and step count the claims read exist in the tier's sweeps."""
    o, a, ms = cfg["onestep"], cfg["analysis"], cfg["multistep"]
    if a["depth"] not in o["depths"]:
        raise ConfigError(f"'analysis.depth': {a['depth']} is not in 'onestep.depths' (allowed: {o['depths']})")
    if a["ref_width"] not in o["widths"] or a["ref_width"] == max(o["widths"]):
        raise ConfigError(f"'analysis.ref_width': {a['ref_width']} must be one of 'onestep.widths' below the "
                          f"largest (allowed: {sorted(o['widths'])[:-1]})")
    if a["steps"] not in ms["steps"]:
        raise ConfigError(f"'analysis.steps': {a['steps']} is not in 'multistep.steps' (allowed: {ms['steps']})")
    if ms["depth"] != a["depth"]:
        raise ConfigError(f"'multistep.depth': {ms['depth']} differs from 'analysis.depth' (allowed: {a['depth']})")
    if ms["low"] >= ms["high"]:
        raise ConfigError(f"'multistep.low': {ms['low']} must be below 'multistep.high' ({ms['high']})")
    if o["low"] >= o["high"]:
        raise ConfigError(f"'onestep.low': {o['low']} must be below 'onestep.high' ({o['high']})")


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train", script="train", priority=1, wildcards={"experiment": "|".join(EXPERIMENTS)},
             outputs=paper.model_files("{experiment}"),
             # only this experiment's slice of the config, so editing the other experiment does not retrain this one
             params=lambda w: {"experiment": w.experiment, "device": cfg["device"], "data": cfg["data"],
                               "schemes": cfg["schemes"], w.experiment: cfg[w.experiment]}),
    ]


def analyses(paper):
    checkpoints = {e: paper.model_files(e)["checkpoint"] for e in EXPERIMENTS}
    params = {**paper.cfg["analysis"], "schemes": paper.cfg["schemes"], "onestep": paper.cfg["onestep"],
              "multistep": paper.cfg["multistep"]}
    return [
        Analysis("onestep", script="analyze_onestep", reads={"onestep": checkpoints["onestep"]}, params=params,
                 figures=("eta_vs_width", "convergence")),
        Analysis("multistep", script="analyze_multistep", reads={"multistep": checkpoints["multistep"]},
                 params=params, figures=("multistep",)),
    ]
