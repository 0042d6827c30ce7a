"""linear_attention_optimization: the Python side of its workflow."""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {"train": Resources(gpu=True, threads=2, mem_mb=8000, runtime=60),
             "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=60)}

# what the analyses compare (claims A1, A3-A6): each must be a setting of the config
NEEDED = ("normal", "gamma", "sphere", "normal_l1")


def check(cfg):
    settings = cfg["settings"]
    for name in NEEDED:
        if name not in settings:
            raise ConfigError(f"'settings': {sorted(settings)} lacks {name!r} (allowed: a mapping holding {NEEDED})")
    if not settings["normal"]["diagnostics"]:
        raise ConfigError("'settings.normal.diagnostics': false (allowed: true; R_med and smoothness are read there)")
    if cfg["analysis"]["noise_setting"] not in settings:
        raise ConfigError(f"'analysis.noise_setting': {cfg['analysis']['noise_setting']!r} is no setting "
                          f"(allowed: {sorted(settings)})")
    for key in ("diag_size",):
        if cfg[key] > cfg["test_size"]:
            raise ConfigError(f"'{key}': {cfg[key]} exceeds test_size {cfg['test_size']} (allowed: 2 .. test_size)")
    late = [s for s in cfg["rmed_steps"] if s > cfg["steps"]]
    if late:
        raise ConfigError(f"'rmed_steps': {late} lie after the last step {cfg['steps']} (allowed: 0 .. steps)")


def settings(cfg):
    return sorted(cfg["settings"])


def history_path(paper, setting):
    return paper.model_files(setting)["history"]


def checkpoint_path(paper, setting):
    return paper.model_files(setting)["checkpoint"]


def train_params(cfg, setting):
    keys = ("device", "d", "n", "gamma_shape", "init_std", "test_size", "diag_size", "log_every", "steps", "batch",
            "seeds")
    s = cfg["settings"][setting]
    diagnostics = s["diagnostics"]
    return {"name": setting, **{k: cfg[k] for k in keys}, "setting": s,
            "rmed_steps": cfg["rmed_steps"] if diagnostics else [],
            "smooth_steps": cfg["smooth_steps"] if diagnostics else 0, "smooth_every": cfg["smooth_every"]}


def steps(paper):
    return [
        Step("train", script="train", priority=1, wildcards={"setting": "|".join(settings(paper.cfg))},
             outputs=paper.model_files("{setting}"),
             params=lambda w: train_params(paper.cfg, w.setting)),
    ]


def analyses(paper):
    cfg = paper.cfg
    a = cfg["analysis"]
    base = {k: cfg[k] for k in ("d", "n", "gamma_shape", "init_std")}
    return [
        Analysis("optim", script="analyze_optim",
                 reads={"histories": [history_path(paper, s) for s in settings(cfg)]},
                 params={"settings": cfg["settings"]}, figures=("loss_curves", "condition", "smoothness")),
        Analysis("noise", script="analyze_noise", reads={},
                 params={**a, **base, "setting": cfg["settings"][a["noise_setting"]]}, figures=("noise",)),
        Analysis("identity", script="analyze_identity", reads={}, params={**a, **base}),
    ]
