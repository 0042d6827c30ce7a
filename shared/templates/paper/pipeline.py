"""__PAPER__: the Python side of its workflow (its steps and analyses). See shared/pipeline/paper.py."""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

# Per step (and the shared `analyze`): what one job needs. Quick-tier jobs run single-threaded.
RESOURCES = {"train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=60)}


# What each dataset holds (prepare_data.py): pixels per image, classes and images in all.
DATASETS = {"digits": {"pixels": 64, "classes": 10, "images": 1797}}


def check(cfg):
    """Cross-key checks the schema cannot express, as plain Python (tested without Snakemake). Raise
    ConfigError("'key': <value> <what is wrong> (allowed: ...)") from shared.pipeline.config. Check every assumption a
    script makes that relates two keys, or a key and the data, which would otherwise fail only inside a job."""
    data = DATASETS[cfg["dataset"]]
    for key, wanted in (("d_input", data["pixels"]), ("n_classes", data["classes"])):
        if cfg[key] != wanted:
            raise ConfigError(f"'{key}': {cfg[key]} does not match dataset {cfg['dataset']!r} (allowed: {wanted})")
    train = int(data["images"] * (1 - cfg["test_fraction"]))  # about: the split rounds per class
    if cfg["batch_size"] > train:  # batches drop the last partial one: no batch at all would be trained
        raise ConfigError(f"'batch_size': {cfg['batch_size']} exceeds the about {train} training images of "
                          f"{cfg['dataset']!r} (allowed: 1 .. {train})")


def data_path(paper):
    return paper.out(f"data/{paper.cfg['dataset']}.safetensors")


def model_paths(paper):
    return {"checkpoint": paper.out("models/model.safetensors"), "history": paper.out("models/model.json")}


def steps(paper):
    """One Step per script that makes what the analyses read: the shared rules run each as __PAPER___<name>, with its
    code, its slice of the config (editing another slice reruns nothing) and its RESOURCES."""
    cfg = paper.cfg
    return [
        Step("data", script="prepare_data", outputs={"out": data_path(paper)},
             params={k: cfg[k] for k in ("dataset", "test_fraction")}),
        Step("train", script="train", priority=1, inputs={"data": data_path(paper)}, outputs=model_paths(paper),
             params={k: v for k, v in cfg.items() if k != "analysis"}),
    ]


def analyses(paper):
    """One Analysis per metrics namespace: the script that writes it, what it reads, its parameters, its figures."""
    return [
        Analysis("classifier", script="analyze", reads={**model_paths(paper), "data": data_path(paper)},
                 params=paper.cfg["analysis"], figures=("accuracy",)),
    ]
