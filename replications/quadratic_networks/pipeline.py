"""quadratic_networks: the Python side of its workflow. See shared/pipeline/paper.py.

Two training steps, two analyses: `toy` (single neurons on XOR and a disk; small nets on x1 x2 and ||x||^2) read by
`expressivity` (which also computes functional dimensions, no training); `images` (the collapse grid and ReLinear's
gamma sweep on MNIST-5k with an MLP at the quick tier, CIFAR-10 with ResNet20 at the full tier) read by
`trainability`.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train_toy": Resources(gpu=False, threads=1, mem_mb=2000, runtime=30),
    "train_images": Resources(gpu=True, threads=8, mem_mb=16000, runtime=1440),  # full: 16 ResNet20 runs of 200 epochs
    "analyze": Resources(gpu=False, threads=4, mem_mb=8000, runtime=60),
}


def check(cfg):
    """Cross-key checks: the data agree with the model, and the runs the claims read are in the grid."""
    e = cfg["images"]
    if problem := shape_mismatch(e["dataset"], {"images.d_input": e["d_input"], "images.n_classes": e["n_classes"]}):
        raise ConfigError(problem)
    if (e["arch"] == "resnet20") != (e["dataset"] == "cifar10"):
        raise ConfigError(f"'images.arch': {e['arch']!r} does not fit dataset {e['dataset']!r} "
                          f"(allowed: resnet20 with cifar10, mlp otherwise)")
    if e["augment"] and e["arch"] != "resnet20":
        raise ConfigError("'images.augment': true needs images (allowed: true only with arch resnet20)")
    train = image_facts(e["dataset"])["n_train"]
    if e["batch_size"] > train:
        raise ConfigError(f"'images.batch_size': {e['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")
    if e["main_lr"] not in e["lrs"]:
        raise ConfigError(f"'images.main_lr': {e['main_lr']} is not in 'images.lrs' "
                          f"(allowed: {', '.join(map(str, e['lrs']))})")
    gammas = e["sweep"]["gammas"]
    if 0 not in gammas or max(gammas) != e["main_lr"] or len(gammas) < 3:
        raise ConfigError(f"'images.sweep.gammas': {gammas} must hold 0, the main lr {e['main_lr']} as its largest, "
                          f"and at least one gamma between (allowed: [0, ..., {e['main_lr']}])")
    if not set(e["sweep"]["seeds"]) <= set(e["seeds"]):
        raise ConfigError(f"'images.sweep.seeds': {e['sweep']['seeds']} are not all in 'images.seeds' "
                          f"(allowed: a subset of {e['seeds']})")


def data_path(cfg):
    return f"data/prepared/{cfg['images']['dataset']}.safetensors"


def steps(paper):
    cfg = paper.cfg
    images = Step("train_images", script="train_images", priority=1, inputs={"data": data_path(cfg)},
                  outputs=paper.model_files("images"), params={"device": cfg["device"], "images": cfg["images"]})
    return [
        Step("train_toy", script="train_toy", priority=1, outputs=paper.model_files("toy"),
             params={"device": cfg["device"], "toy": cfg["toy"]}),
        *([images] if cfg["images"]["run"] else []),
    ]


def analyses(paper):
    cfg = paper.cfg
    off = "" if cfg["images"]["run"] else (
        f"the image experiments are not run in this config (images.run: false; at the full tier they are "
        f"{cfg['images']['arch']} on {cfg['images']['dataset']}, GPU hours)")
    return [
        Analysis("expressivity", script="analyze_expressivity", reads={"checkpoint": paper.model_files("toy")[
            "checkpoint"]}, params={"toy": cfg["toy"], "dimension": cfg["dimension"]}, figures=("regression",)),
        Analysis("trainability", script="analyze_trainability",
                 reads={**paper.model_files("images"), "data": data_path(cfg)},
                 params={"images": cfg["images"], "analysis": cfg["analysis"]}, figures=("collapse", "sweep"),
                 not_run=off),
    ]
