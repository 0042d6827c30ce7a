"""The workflow side of equivalent_linear_mappings; see shared/pipeline/paper.py.

Quick tier: data (the shared prepare_dataset rule) -> train (one SwiGLU transformer) -> analyze_linear_map.
Full tier: analyze_hf alone (it downloads Qwen3-0.6B through transformers and analyses it in float64)."""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=4000, runtime=30),
    "analyze": Resources(mem_mb=4000, runtime=30),
    # Qwen3-0.6B in float64 (~5 GB of weights, a copy per frozen map) and d = 1024 backward passes per prompt
    "analyze_hf": Resources(gpu=True, threads=8, mem_mb=64000, runtime=180),
}
FIGURES = ("spectrum", "reconstruction", "layers")
QUICK_KEYS, FULL_KEYS = ("dataset", "model", "train", "analysis"), ("hf",)


def check(cfg):
    """The quick tier trains (QUICK_KEYS), the full tier loads a pretrained model (FULL_KEYS): one set, complete."""
    quick, full = [k in cfg for k in QUICK_KEYS], [k in cfg for k in FULL_KEYS]
    if any(quick) and any(full):
        raise ConfigError(f"keys {QUICK_KEYS} (a trained model) and {FULL_KEYS} (a pretrained one) exclude each other")
    if any(quick) and not all(quick):
        raise ConfigError(f"a trained model needs all of {QUICK_KEYS} (allowed: all or none)")
    if not (any(quick) or any(full)):
        raise ConfigError(f"'hf': missing (allowed: {QUICK_KEYS} or {FULL_KEYS})")
    model = cfg.get("model")
    if model and (model["d_model"] % model["n_head"] or (model["d_model"] // model["n_head"]) % 2):
        raise ConfigError(f"'model.n_head': d_model {model['d_model']} must split into {model['n_head']} heads of "
                          f"even size (rotary embeddings rotate channel pairs; allowed: a divisor of d_model "
                          f"leaving an even head size)")
    if "analysis" in cfg and cfg["analysis"]["prompt_len"] > cfg["model"]["n_ctx"]:
        raise ConfigError(f"'analysis.prompt_len': {cfg['analysis']['prompt_len']} exceeds the model's n_ctx "
                          f"(allowed: <= {cfg['model']['n_ctx']})")


def data_path(cfg):
    return f"data/prepared/{cfg.get('dataset', 'stories_synthetic')}.safetensors"


def checkpoint(paper):
    return paper.out("models/lm.safetensors")


def history(paper):
    return paper.out("models/lm.json")


def steps(paper):
    return [
        Step("train", script="train", priority=1, inputs={"data": data_path(paper.cfg)},
             outputs={"checkpoint": checkpoint(paper), "history": history(paper)},
             params={k: paper.cfg.get(k) for k in ("model", "train", "device")}),
    ]


def analyses(paper):
    cfg = paper.cfg
    if "hf" in cfg:
        return [Analysis("linear_map", script="analyze_hf", params={**cfg["hf"], "device": cfg["device"]},
                         figures=FIGURES, resources="analyze_hf")]
    return [Analysis("linear_map", script="analyze_linear_map", figures=FIGURES,
                     reads={"checkpoint": checkpoint(paper), "data": data_path(cfg)},
                     params={**cfg["analysis"], "device": cfg["device"]})]
