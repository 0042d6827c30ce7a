"""implicit_icl_update: the Python side of its workflow. See shared/pipeline/paper.py.

One training job (every contextual block of the tier, per seed, with its untrained copy), then four analyses of the
checkpoint: the exact identities, the token-by-token dynamics, the E1 loss curves and the explicit fine-tuning.
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {"train": Resources(gpu=True, threads=4, mem_mb=16000, runtime=240),
             "analyze": Resources(gpu=False, threads=4, mem_mb=16000, runtime=120)}
NEEDED = ("attn", "attn_skip", "gru", "stack")  # the analyses read these models


def check(cfg):
    """Cross-key checks the schema cannot express."""
    for name in NEEDED:
        if name not in cfg["models"]:
            raise ConfigError(f"'models': {name!r} is missing (allowed: a mapping with at least {', '.join(NEEDED)})")
    expected = {"attn": ("softmax", False), "attn_skip": ("softmax", True), "stack": ("softmax", True)}
    for name, (kind, skip) in expected.items():
        m = cfg["models"][name]
        if (m["kind"], m["skip"]) != (kind, skip):
            raise ConfigError(f"'models.{name}': kind {m['kind']!r}, skip {m['skip']} (allowed: kind {kind!r}, skip {skip})")
    if cfg["models"]["gru"]["kind"] != "gru":
        raise ConfigError(f"'models.gru.kind': {cfg['models']['gru']['kind']!r} (allowed: 'gru')")
    for name, m in cfg["models"].items():
        if m.get("layers", 1) > 1 and (m["kind"] != "softmax" or not m["skip"]):
            raise ConfigError(f"'models.{name}.layers': stacks are skip blocks of softmax attention "
                              f"(allowed: layers 1, or kind softmax with skip true)")
        if name != "stack" and m.get("layers", 1) != 1:
            raise ConfigError(f"'models.{name}.layers': only 'stack' is stacked (allowed: 1)")
    if cfg["models"]["stack"].get("layers", 1) < 2:
        raise ConfigError("'models.stack.layers': a stack needs at least 2 blocks (allowed: >= 2)")
    if cfg["eval_every"] > cfg["steps"]:
        raise ConfigError(f"'eval_every': {cfg['eval_every']} exceeds steps = {cfg['steps']} (allowed: <= steps)")


def checkpoint_path(paper):
    return paper.out("models/blocks.safetensors")


def history_path(paper):
    return paper.out("models/blocks.json")


def steps(paper):
    return [
        Step("train", script="train", priority=1,
             outputs={"checkpoint": checkpoint_path(paper), "history": history_path(paper)},
             params={k: v for k, v in paper.cfg.items() if k != "analysis"}),
    ]


def analyses(paper):
    cfg = paper.cfg
    params = {**cfg["analysis"], "n": cfg["n"], "d": cfg["d"]}
    ckpt = {"checkpoint": checkpoint_path(paper)}
    return [
        Analysis("identities", script="analyze_identities", reads=ckpt, params=params),
        Analysis("dynamics", script="analyze_dynamics", reads=ckpt, params=params, figures=("marginal",)),
        Analysis("training", script="analyze_training", reads={**ckpt, "history": history_path(paper)},
                 params=params, figures=("losses",)),
        Analysis("finetune", script="analyze_finetune", reads=ckpt, params=params, figures=("finetune",)),
    ]
