"""tversky_networks: the Python side of its workflow. See shared/pipeline/paper.py.

Three training steps, three analyses: `xor` (one Tversky projection vs one linear layer on the four XOR points,
synthetic, made in the step), `images` (Tversky, linear and parameter-matched MLP heads on MNIST pixels: the
registry's mnist_5k at the quick tier, mnist at the full tier), `lm` (the shared transformer with an untied, a tied and
a Tversky unembedding on the registry's stories_synthetic at the quick tier, tinystories at the full tier).
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

from .model import LM_HEADS

RESOURCES = {
    "train_xor": Resources(gpu=False, threads=1, mem_mb=2000, runtime=30),
    "train_images": Resources(gpu=True, threads=4, mem_mb=8000, runtime=60),
    "train_lm": Resources(gpu=True, threads=4, mem_mb=16000, runtime=240),
    "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=30),
}


def check(cfg):
    """Cross-key checks: images agree with their dataset; every LM head is trained; heads divide."""
    e, lm = cfg["images"], cfg["lm"]
    if problem := shape_mismatch(e["dataset"], {"images.d_input": e["d_input"], "images.n_classes": e["n_classes"]}):
        raise ConfigError(problem)
    train = image_facts(e["dataset"])["n_train"]
    if e["batch_size"] > train:
        raise ConfigError(f"'images.batch_size': {e['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")
    if missing := [h for h in LM_HEADS if h not in lm["heads"]]:
        raise ConfigError(f"'lm.heads': {lm['heads']} lacks {missing}; the claims compare all of {list(LM_HEADS)}")
    model = lm["model"]
    if model["d_model"] % model["n_head"] or (model["d_model"] // model["n_head"]) % 2:
        raise ConfigError(f"'lm.model.n_head': d_model {model['d_model']} must split into {model['n_head']} heads "
                          f"of even size (allowed: a divisor of d_model leaving an even head size)")


def image_path(cfg):
    return f"data/prepared/{cfg['images']['dataset']}.safetensors"


def text_path(cfg):
    return f"data/prepared/{cfg['lm']['dataset']}.safetensors"


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train_xor", script="train_xor", priority=1, outputs=paper.model_files("xor"),
             params={"device": "cpu", "xor": cfg["xor"]}),
        Step("train_images", script="train_images", priority=1, inputs={"data": image_path(cfg)},
             outputs=paper.model_files("images"), params={"device": cfg["device"], "images": cfg["images"]}),
        Step("train_lm", script="train_lm", priority=1, inputs={"data": text_path(cfg)},
             outputs=paper.model_files("lm"), params={"device": cfg["device"], "lm": cfg["lm"]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    return [
        Analysis("xor", script="analyze_xor", reads=paper.model_files("xor"), params={"xor": cfg["xor"]},
                 figures=("xor",)),
        Analysis("images", script="analyze_images", reads={**paper.model_files("images"), "data": image_path(cfg)},
                 params={"images": cfg["images"], "analysis": cfg["analysis"]}, figures=("prototypes",)),
        Analysis("lm", script="analyze_lm", reads={**paper.model_files("lm"), "data": text_path(cfg)},
                 params={"lm": cfg["lm"], "device": cfg["device"]}, figures=("lm",)),
    ]
