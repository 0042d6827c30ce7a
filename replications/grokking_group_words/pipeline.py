"""grokking_group_words: the Python side of its workflow. See shared/pipeline/paper.py.

Training jobs: `grok` (a training-fraction sweep of the quadratic net on one group: grokking curves and the
memorise / generalise boundary) and `width_<G>` (the bilinear surrogate on the full table of G at a range of widths).
Analyses: `algebra` (exact tensor algebra and CP-ALS ranks of word tensors; trains nothing), `grokking`, `width`.
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=240),
    "analyze": Resources(gpu=False, threads=4, mem_mb=8000, runtime=240),
}


def experiments(cfg):
    return (*(["grok"] if cfg["grok"]["run"] else []), *(f"width_{g}" for g in cfg["width"]["groups"]))


def check(cfg):
    """Cross-key checks: the analysed fraction is trained, every width group has its widths, words are valid."""
    if cfg["grok"]["run"] and cfg["analysis"]["main_fraction"] not in cfg["grok"]["fractions"]:
        raise ConfigError(f"'analysis.main_fraction': {cfg['analysis']['main_fraction']} is not in 'grok.fractions' "
                          f"(allowed: {', '.join(map(str, cfg['grok']['fractions']))})")
    for g in cfg["width"]["groups"]:
        if g not in cfg["width"]["widths"]:
            raise ConfigError(f"'width.widths': no widths for group {g!r} (allowed: one list per 'width.groups')")
    if cfg["analysis"]["strassen_group"] not in cfg["width"]["groups"]:
        raise ConfigError(f"'analysis.strassen_group': {cfg['analysis']['strassen_group']!r} is not in "
                          f"'width.groups' (allowed: {', '.join(cfg['width']['groups'])})")


def checkpoint_path(paper, experiment):
    return paper.model_files(experiment)["checkpoint"]


def history_path(paper, experiment):
    return paper.model_files(experiment)["history"]


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train", script="train", priority=1, wildcards={"experiment": "|".join(experiments(cfg))},
             outputs=paper.model_files("{experiment}"),
             # only this experiment's slice of the config, so editing another experiment does not retrain this one
             params=lambda w: {"experiment": w.experiment, "device": cfg["device"], "word": cfg["word"],
                               **({"grok": cfg["grok"]} if w.experiment == "grok" else {"width": cfg["width"]})}),
    ]


def analyses(paper):
    cfg = paper.cfg
    width = {e: checkpoint_path(paper, e) for e in experiments(cfg) if e != "grok"}
    off = "" if cfg["grok"]["run"] else (  # grok.run: false
        "the training-fraction sweep (grok) is not run in this config (grok.run: false; at the full tier it is 100 "
        "runs of 20k full-batch steps on S5, GPU hours)")
    return [
        Analysis("algebra", script="analyze_algebra", params=cfg["algebra"], figures=("ranks",)),
        Analysis("grokking", script="analyze_grokking",
                 reads={"checkpoint": checkpoint_path(paper, "grok"), "history": history_path(paper, "grok")},
                 params={**cfg["analysis"], "word": cfg["word"]}, figures=("grokking", "fraction"), not_run=off),
        Analysis("width", script="analyze_width", reads={"checkpoints": list(width.values())},
                 params={**cfg["analysis"], "word": cfg["word"], "als": cfg["algebra"]["als"]},
                 figures=("width",)),
    ]

