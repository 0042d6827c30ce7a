"""layernorm_removal: the Python side of its workflow. See shared/pipeline/paper.py.

One training step, `train` (per seed: pretrain the GPT-2-style stand-in on the registry's stories, measure sigma_avg
per LN site and position class, then fine-tune three arms from it: LN kept, gradual removal in the paper's order,
all at once), read by one analysis, `removal` (cross-entropies, the naive swap, per-site sensitivity, the reaction
task, and the float64 identities: FakeLN = LN, folding, exact direct logit attribution).
"""
from shared.nn.norm_removal import all_at_once, official_schedule, paper_schedule
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=1, mem_mb=8000, runtime=120),
    "analyze": Resources(gpu=False, threads=1, mem_mb=8000, runtime=30),
}


def events(cfg, arm):
    """[(step, site)] of a fine-tuning arm: control (none), gradual (the paper's order), all_at_once."""
    f, n_layer = cfg["finetune"], cfg["model"]["n_layer"]
    if arm == "control":
        return []
    if arm == "all_at_once":
        return all_at_once(n_layer, f["all_at_once_step"])
    if f["schedule"] == "official":
        return official_schedule(n_layer)
    return paper_schedule(n_layer, f["start"], f["gap"])


def check(cfg):
    """Cross-key checks: heads divide d_model; every removal event falls before the last fine-tuning step."""
    m, f = cfg["model"], cfg["finetune"]
    if m["d_model"] % m["n_head"]:
        raise ConfigError(f"'model.n_head': {m['n_head']} does not divide d_model = {m['d_model']}")
    last = max(s for arm in ("gradual", "all_at_once") for s, _ in events(cfg, arm))
    if last >= f["steps"]:
        raise ConfigError(f"'finetune.steps': {f['steps']} ends before the last removal event at step {last} "
                          f"(allowed: > {last})")


def text_path(cfg):
    return f"data/prepared/{cfg['dataset']}.safetensors"


def steps(paper):
    cfg = paper.cfg
    return [Step("train", script="train", priority=1, inputs={"data": text_path(cfg)},
                 outputs=paper.model_files("removal"),
                 params={k: cfg[k] for k in ("device", "seeds", "model", "pretrain", "finetune", "eval")})]


def analyses(paper):
    cfg = paper.cfg
    return [Analysis("removal", script="analyze", reads={**paper.model_files("removal"), "data": text_path(cfg)},
                     params={k: cfg[k] for k in ("device", "seeds", "model", "eval")}, figures=("removal",))]
