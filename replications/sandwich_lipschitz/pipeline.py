"""sandwich_lipschitz: the Python side of its workflow. See shared/pipeline/paper.py.

Two training steps, two analyses: `toy` (the paper's square-wave fit, Tab. 1 / Fig. 3: sandwich and orthogonal
networks at each gamma, a plain ReLU MLP) read by `toy`; `images` (sandwich, orthogonal and plain MLP classifiers
on MNIST-5k at the quick tier, MNIST at the full tier) read by `robustness`.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train_toy": Resources(gpu=False, threads=1, mem_mb=2000, runtime=60),
    "train_images": Resources(gpu=True, threads=8, mem_mb=16000, runtime=240),
    "analyze": Resources(gpu=False, threads=2, mem_mb=4000, runtime=60),
}


def check(cfg):
    """Cross-key checks: the data agree with the model, and the radii and gammas the claims read are measured."""
    e, a = cfg["images"], cfg["analysis"]["images"]
    if problem := shape_mismatch(e["dataset"], {"images.d_input": e["d_input"], "images.n_classes": e["n_classes"]}):
        raise ConfigError(problem)
    train = image_facts(e["dataset"])["n_train"]
    if e["batch_size"] > train:
        raise ConfigError(f"'images.batch_size': {e['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")
    for key, eps in a["claim_eps"].items():
        if eps not in a["eps"]:
            raise ConfigError(f"'analysis.images.claim_eps.{key}': {eps} is not in 'analysis.images.eps' "
                              f"(allowed: one of {a['eps']})")
    t = cfg["toy"]
    if t["batch_size"] > t["train_points"]:
        raise ConfigError(f"'toy.batch_size': {t['batch_size']} exceeds 'toy.train_points' {t['train_points']} "
                          f"(allowed: 1 .. {t['train_points']})")
    for key, gammas in (("toy.gammas", t["gammas"]), ("images.gammas", e["gammas"])):
        if len(gammas) < 2:
            raise ConfigError(f"'{key}': {gammas} needs a small and a large gamma (allowed: at least 2 values)")


def data_path(cfg):
    return f"data/prepared/{cfg['images']['dataset']}.safetensors"


def untrained(paper, run):
    return paper.out(f"models/{run}-untrained.safetensors")


def steps(paper):
    cfg = paper.cfg
    images = Step("train_images", script="train_images", priority=1, inputs={"data": data_path(cfg)},
                  outputs={**paper.model_files("images"), "untrained": untrained(paper, "images")},
                  params={"device": cfg["device"], "images": cfg["images"]})
    return [
        Step("train_toy", script="train_toy", priority=1,
             outputs={**paper.model_files("toy"), "untrained": untrained(paper, "toy")}, params={"toy": cfg["toy"]}),
        *([images] if cfg["images"]["run"] else []),
    ]


def analyses(paper):
    cfg, e = paper.cfg, paper.cfg["images"]
    off = "" if e["run"] else (  # images.run: false
        f"the classifiers are not trained in this config (images.run: false; at the full tier they are "
        f"{e['epochs']} epochs of {len(e['seeds'])} seeds on {e['dataset']}, a GPU job)")
    return [
        Analysis("toy", script="analyze_toy", reads={"checkpoint": paper.model_files("toy")["checkpoint"],
                                                     "untrained": untrained(paper, "toy")},
                 params={"toy": cfg["toy"], "analysis": cfg["analysis"]["toy"]}, figures=("fit",)),
        Analysis("robustness", script="analyze_images",
                 reads={"checkpoint": paper.model_files("images")["checkpoint"],
                        "untrained": untrained(paper, "images"), "data": data_path(cfg)},
                 params={"images": e, "analysis": cfg["analysis"]["images"]}, figures=("robustness",), not_run=off),
    ]
