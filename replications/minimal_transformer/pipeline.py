"""minimal_transformer: the Python side of its workflow. See shared/pipeline/paper.py.

One training step and one analysis per experiment of the tier (`experiments`: mnist at the quick tier on the
registry's mnist_5k; mnist and cifar10 at the full tier): `train_<experiment>` trains every arm of common.ARMS for
every seed with the same batches and optimizer settings; the analysis `<experiment>` scores accuracy against
parameters, the self-similarity of the trained heads and the exact identities of the reduced forms.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=240),
    "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=30),
}


def check(cfg):
    """Cross-key checks: each experiment's images agree with its dataset, patches tile the image, heads divide d, a
    batch fits the training split."""
    for name, e in cfg["experiments"].items():
        prefix = f"experiments.{name}"
        if problem := shape_mismatch(e["dataset"], {f"{prefix}.size": e["image_size"],
                                                    f"{prefix}.in_channels": e["channels"]}):
            raise ConfigError(problem.replace(f"{prefix}.size", f"{prefix}.image_size")
                              .replace(f"{prefix}.in_channels", f"{prefix}.channels"))
        if e["image_size"] % e["patch"]:
            raise ConfigError(f"'{prefix}.patch': {e['patch']} does not divide image_size {e['image_size']} "
                              f"(allowed: its divisors)")
        if e["d"] % cfg["model"]["n_head"]:
            raise ConfigError(f"'{prefix}.d': {e['d']} is not divisible by model.n_head {cfg['model']['n_head']}")
        train = image_facts(e["dataset"])["n_train"]
        if cfg["train"]["batch_size"] > train:
            raise ConfigError(f"'train.batch_size': {cfg['train']['batch_size']} exceeds the {train} training images "
                              f"of {e['dataset']!r} (allowed: 1 .. {train})")


def data_path(e):
    return f"data/prepared/{e['dataset']}.safetensors"


def train_params(cfg, name):
    return {"device": cfg["device"], "model": cfg["model"], "train": cfg["train"], "experiment": name,
            "spec": cfg["experiments"][name]}


def steps(paper):
    cfg = paper.cfg
    return [Step(f"train_{name}", script="train", priority=1, resources="train", inputs={"data": data_path(e)},
                 outputs=paper.model_files(name), params=train_params(cfg, name))
            for name, e in cfg["experiments"].items()]


def analyses(paper):
    cfg = paper.cfg
    return [Analysis(name, script="analyze", reads={**paper.model_files(name), "data": data_path(e)},
                     params={**train_params(cfg, name), "analysis": cfg["analysis"]},
                     figures=("accuracy", "selfsim"))
            for name, e in cfg["experiments"].items()]
