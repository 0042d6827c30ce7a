"""sgd_xor_features: the Python side of its workflow. See shared/pipeline/paper.py.

Three training steps, two analyses: `train_sweep` (one job per d: the networks over seeds x sample sizes) and
`train_features` (one job per d: the random-features control on the same pools) read by `sample_complexity`;
`train_phases` (one-pass SGD at one d, XOR and random labels, the neurons logged) read by `phases`.
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train_sweep": Resources(gpu=False, threads=1, mem_mb=4000, runtime=60),
    "train_features": Resources(gpu=False, threads=1, mem_mb=4000, runtime=60),
    "train_phases": Resources(gpu=False, threads=1, mem_mb=2000, runtime=30),
    "analyze": Resources(gpu=False, threads=1, mem_mb=4000, runtime=30),
}


def check(cfg):
    """Cross-key checks: the XOR support lies in every d, and the dimensions the claims compare are measured."""
    support = cfg["task"]["support"]
    dims = [*cfg["sweep"]["dims"], *cfg["features"]["dims"], cfg["phases"]["d"]]
    if len(set(support)) != 2 or max(support) >= min(dims):
        raise ConfigError(f"'task.support': {support} must be two distinct coordinates below the smallest d "
                          f"{min(dims)} (allowed: two of 0 .. {min(dims) - 1})")
    if not set(cfg["features"]["dims"]) <= set(cfg["sweep"]["dims"]):
        raise ConfigError(f"'features.dims': {cfg['features']['dims']} must be a subset of 'sweep.dims' "
                          f"{cfg['sweep']['dims']} (the control is compared with the network at the same d)")
    for part in ("sweep", "features"):
        grid = cfg[part]["grid"]
        if grid["hi_log2_per_d"] <= grid["lo_log2_per_d"]:
            raise ConfigError(f"'{part}.grid.hi_log2_per_d': {grid['hi_log2_per_d']} must exceed lo_log2_per_d "
                              f"{grid['lo_log2_per_d']} (allowed: > {grid['lo_log2_per_d']})")
    if cfg["phases"]["log_every"] > cfg["phases"]["steps"]:
        raise ConfigError(f"'phases.log_every': {cfg['phases']['log_every']} exceeds phases.steps "
                          f"{cfg['phases']['steps']} (allowed: 1 .. {cfg['phases']['steps']})")


def sweep_files(paper, d):
    return paper.model_files(f"sweep_d{d}")


def features_file(paper, d):
    return paper.out(f"models/features_d{d}.json")


def phase_files(paper):
    return {**paper.model_files("phases"), "trajectory": paper.out("models/phases_trajectory.npz")}


def steps(paper):
    cfg = paper.cfg
    shared = {k: cfg[k] for k in ("device", "task", "network")}
    return [
        Step("train_sweep", script="train_sweep", priority=1, wildcards={"d": r"\d+"},
             outputs=sweep_files(paper, "{d}"),
             params=lambda w: {**shared, "d": int(w.d), "sweep": cfg["sweep"]}),
        Step("train_features", script="train_features", priority=1, wildcards={"d": r"\d+"},
             outputs={"history": features_file(paper, "{d}")},
             params=lambda w: {**shared, "d": int(w.d), "features": cfg["features"]}),
        Step("train_phases", script="train_phases", priority=1, outputs=phase_files(paper),
             params={**shared, "phases": cfg["phases"]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    a = cfg["analysis"]
    return [
        Analysis("sample_complexity", script="analyze_sample_complexity",
                 reads={"sweeps": [sweep_files(paper, d)["history"] for d in cfg["sweep"]["dims"]],
                        "features": [features_file(paper, d) for d in cfg["features"]["dims"]]},
                 params={"error_threshold": a["error_threshold"]}, figures=("sample_complexity",)),
        Analysis("phases", script="analyze_phases", reads=phase_files(paper),
                 params={**{k: a[k] for k in ("phase_error", "top_fraction", "cos_threshold")},
                         "support": cfg["task"]["support"], "test_points": cfg["phases"]["test_points"]},
                 figures=("phases",)),
    ]
