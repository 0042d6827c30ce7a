"""__PAPER__: the Python side of its workflow (rules.smk holds only rules). See shared/pipeline/paper.py."""
from shared.pipeline.paper import Analysis, Resources

# Per rule of rules.smk (and the shared `analyze`): what one job needs. Quick-tier jobs run single-threaded.
RESOURCES = {"train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=60)}


def check(cfg):
    """Cross-key checks the schema cannot express, as plain Python (tested without Snakemake). Raise
    ConfigError("'key': what is wrong (allowed: ...)") from shared.pipeline.config."""


def data_path(paper):
    return paper.out(f"data/{paper.cfg['dataset']}.safetensors")


def analyses(paper):
    """One Analysis per metrics namespace: the script that writes it, what it reads, its parameters, its figures."""
    models = {"checkpoint": paper.out("models/model.safetensors"), "history": paper.out("models/model.json")}
    return [
        Analysis("classifier", script="analyze", reads={**models, "data": data_path(paper)},
                 params=paper.cfg["analysis"], figures=("accuracy",)),
    ]
