"""phm: the Python side of its workflow. See shared/pipeline/paper.py.

Two training steps, two analyses: `teacher` (single PHM / quaternion / dense maps fitted to planted quaternion and
dense teachers, synthetic data made in the step) read by `teacher`; `images` (MLPs whose hidden maps are dense, PHM
at each n, or quaternion, on the registry's mnist_5k at the quick tier, MNIST at the full tier) read by `images`.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

CLAIMED_NS = (2, 4, 8)  # the n of PHM the claims read

RESOURCES = {
    "train_teacher": Resources(gpu=False, threads=1, mem_mb=2000, runtime=30),
    "train_images": Resources(gpu=True, threads=4, mem_mb=8000, runtime=120),
    "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=30),
}


def check(cfg):
    """Cross-key checks: the data agree with the model; every claimed n is run and divides every map's sizes."""
    e, t = cfg["images"], cfg["teacher"]
    if problem := shape_mismatch(e["dataset"], {"images.d_input": e["d_input"], "images.n_classes": e["n_classes"]}):
        raise ConfigError(problem)
    if missing := [n for n in CLAIMED_NS if n not in e["ns"]]:
        raise ConfigError(f"'images.ns': {e['ns']} lacks {missing}; the claims read n = {list(CLAIMED_NS)}")
    for size in (e["d_input"], *e["hidden"]):
        if bad := [n for n in (*e["ns"], 4) if size % n]:
            raise ConfigError(f"'images.hidden': size {size} is not divisible by n = {bad} "
                              f"(allowed: multiples of {max(e['ns'])} and 4)")
    if t["d"] % 8:
        raise ConfigError(f"'teacher.d': {t['d']} is not divisible by 8 (the students have n = 2, 4 and 8)")
    train = image_facts(e["dataset"])["n_train"]
    if e["batch_size"] > train:
        raise ConfigError(f"'images.batch_size': {e['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")


def data_path(cfg):
    return f"data/prepared/{cfg['images']['dataset']}.safetensors"


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train_teacher", script="train_teacher", priority=1, outputs=paper.model_files("teacher"),
             params={"device": cfg["device"], "teacher": cfg["teacher"]}),
        Step("train_images", script="train_images", priority=1, inputs={"data": data_path(cfg)},
             outputs=paper.model_files("images"), params={"device": cfg["device"], "images": cfg["images"]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    return [
        Analysis("teacher", script="analyze_teacher", reads=paper.model_files("teacher"),
                 params={"teacher": cfg["teacher"], "analysis": cfg["analysis"]}, figures=("teacher",)),
        Analysis("images", script="analyze_images", reads={**paper.model_files("images"), "data": data_path(cfg)},
                 params={"images": cfg["images"], "analysis": cfg["analysis"]}, figures=("accuracy",)),
    ]
