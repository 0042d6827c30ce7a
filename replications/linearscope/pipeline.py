"""linearscope: the Python side of its workflow. See shared/pipeline/paper.py."""
from shared.data.registry import shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

# Per rule: what one job needs. Quick-tier jobs run single-threaded, two at once on two cores.
RESOURCES = {"train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=120),
             "train_sr": Resources(gpu=True, threads=4, mem_mb=8000, runtime=60),
             "analyze": Resources(gpu=True, threads=4, mem_mb=16000, runtime=60)}

MODELS = {"cnn", "cnn_nobias", "bilinear"}  # the analyses read these three by name


def check(cfg):
    """Cross-key checks the schema cannot express (tested without Snakemake)."""
    values = {"image.in_channels": cfg["image"]["in_channels"], "image.size": cfg["image"]["size"],
              "n_classes": cfg["n_classes"]}
    if problem := shape_mismatch(cfg["dataset"], values):
        raise ConfigError(problem)
    size = cfg["image"]["size"]
    if set(cfg["models"]) != MODELS:
        raise ConfigError(f"'models': {sorted(cfg['models'])} (allowed: exactly {sorted(MODELS)})")
    for name, model in cfg["models"].items():
        if model["arch"] == "cnn" and size % 2 ** len(model.get("channels", [])) != 0:
            raise ConfigError(f"'models.{name}.channels': {len(model['channels'])} max-pool halvings do not divide "
                              f"the image side {size} (allowed: at most {(size & -size).bit_length() - 1} layers)")
        if model["arch"] != ("bilinear" if name == "bilinear" else "cnn"):
            raise ConfigError(f"'models.{name}.arch': {model['arch']!r} (allowed: "
                              f"{'bilinear' if name == 'bilinear' else 'cnn'})")
    if cfg["models"]["cnn_nobias"].get("bias", True) or not cfg["models"]["cnn"].get("bias", False):
        raise ConfigError("'models': cnn must have bias: true and cnn_nobias bias: false (allowed: those two)")
    if cfg["image"]["size"] % 2:
        raise ConfigError(f"'image.size': {cfg['image']['size']} is odd (allowed: even sides, the SR net halves it)")
    if cfg["analysis"]["figure_images"] > cfg["analysis"]["images"]:
        raise ConfigError(f"'analysis.figure_images': {cfg['analysis']['figure_images']} exceeds analysis.images "
                          f"(allowed: 1 .. {cfg['analysis']['images']})")


def data_path(paper):
    return f"data/prepared/{paper.cfg['dataset']}.safetensors"


def steps(paper):
    cfg, data = paper.cfg, {"data": data_path(paper)}
    return [
        Step("train", script="train", priority=1, inputs=data,
             outputs={"checkpoint": paper.out("models/models.safetensors"), "history": paper.out("models/models.json")},
             params={k: v for k, v in cfg.items() if k != "analysis"}),
        Step("train_sr", script="train_sr", inputs=data,
             outputs={"checkpoint": paper.out("models/sr.safetensors"), "history": paper.out("models/sr.json")},
             params={k: cfg[k] for k in ("device", "dataset", "image", "seeds", "sr")}),
    ]


def analyses(paper):
    """One Analysis per metrics namespace: the script that writes it, what it reads, its parameters, its figures."""
    reads = {"checkpoint": paper.out("models/models.safetensors"), "data": data_path(paper)}
    return [
        Analysis("cnn", script="analyze_cnn", reads=reads, params=paper.cfg["analysis"],
                 figures=("vote_maps", "bias_share")),
        Analysis("bilinear", script="analyze_bilinear", reads=reads, params=paper.cfg["analysis"],
                 figures=("bilinear_rows",)),
        Analysis("sr", script="analyze_sr", reads={**reads, "checkpoint": paper.out("models/sr.safetensors")},
                 params=paper.cfg["sr"]["analysis"], figures=("sr_basis",)),
    ]
