"""lsa_one_step_gd: the Python side of its workflow. See shared/pipeline/paper.py.

One training job per experiment (iso: the (d, n, sigma) grid; noniso: Sigma of several condition numbers with
w ~ N(0, Sigma^-1); relu: random ReLU-net targets), then two analyses: the learned preconditioner against theory,
and the test risk against one-step GD and ridge.
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

EXPERIMENTS = ("iso", "noniso", "relu")

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=480),  # full iso: 300 runs of 20k steps
    "analyze": Resources(gpu=False, threads=4, mem_mb=8000, runtime=60),
}


def check(cfg):
    """Cross-key checks: the runs the claims read exist in the tier's grid."""
    iso, main = cfg["experiments"]["iso"], cfg["analysis"]["main"]
    for key in ("d", "n", "sigma"):
        if main[key] not in iso[key]:
            raise ConfigError(f"'analysis.main.{key}': {main[key]} is not in 'experiments.iso.{key}' "
                              f"(allowed: {', '.join(map(str, iso[key]))})")
    conds = cfg["experiments"]["noniso"]["conditions"]
    if cfg["analysis"]["noniso_condition"] not in conds:
        raise ConfigError(f"'analysis.noniso_condition': {cfg['analysis']['noniso_condition']} is not in "
                          f"'experiments.noniso.conditions' (allowed: {', '.join(map(str, conds))})")
    if cfg["analysis"]["noniso_condition"] == 1:
        raise ConfigError("'analysis.noniso_condition': 1 makes Sigma isotropic (allowed: > 1)")


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train", script="train", priority=1, wildcards={"experiment": "|".join(EXPERIMENTS)},
             outputs=paper.model_files("{experiment}"),
             # only this experiment's slice of the config, so editing another experiment does not retrain this one
             params=lambda w: {"experiment": w.experiment,
                               **{k: cfg[k] for k in ("device", "model", "optim", "seeds", "basis_seed")},
                               "experiments": {w.experiment: cfg["experiments"][w.experiment]}}),
    ]


def analyses(paper):
    checkpoints = {e: paper.model_files(e)["checkpoint"] for e in EXPERIMENTS}
    params = {**paper.cfg["analysis"], "seeds": paper.cfg["seeds"]}
    return [
        Analysis("preconditioner", script="analyze_preconditioner", reads=checkpoints, params=params,
                 figures=("preconditioner", "eta_vs_n")),
        Analysis("risk", script="analyze_risk", reads=checkpoints, params=params, figures=("risk",)),
    ]
