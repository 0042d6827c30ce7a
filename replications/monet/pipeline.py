"""monet: the Python side of its workflow. See shared/pipeline/paper.py.

data (the registry's mnist_5k; cifar10 at the full tier) -> train (one job per group: monet, the small MONet and
its ablations; flat, the flat classifiers of equal parameters) -> analyses (accuracy: the comparisons; polynomial:
degree and weight identities and the interaction-matrix eigen analysis of the trained Mu-layer) -> figures -> report.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

GROUPS = ("monet", "flat")  # common.GROUPS, restated so that parsing imports no torch
CLAIMED_VARIANTS = {"monet": ("mu", "linear", "gelu", "noshift", "nonorm"),
                    "flat": ("relu", "bilinear", "mu", "mu_noshortcut", "linear")}

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=16000, runtime=720),
    "analyze": Resources(gpu=True, threads=2, mem_mb=8000, runtime=60),  # accuracy evaluates 30 models on the test set
}


def check(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    if problem := shape_mismatch(cfg["dataset"], {"image_shape": cfg["image_shape"], "d_input": cfg["d_input"],
                                                  "n_classes": cfg["n_classes"]}):
        raise ConfigError(problem)
    m = cfg["monet"]
    if len(m["dims"]) != len(m["depths"]):
        raise ConfigError(f"'monet.depths': {m['depths']} has {len(m['depths'])} stages but 'monet.dims' has "
                          f"{len(m['dims'])} (allowed: one depth per dim)")
    for dim in m["dims"]:
        if dim % (4 * m["rank_ratio"]) or dim % 2:
            raise ConfigError(f"'monet.dims': {dim} is not a multiple of 4 x rank_ratio = {4 * m['rank_ratio']} "
                              f"(the spatial shift splits the rank-{dim // m['rank_ratio']} branch in quarters)")
    size, stride = cfg["image_shape"][1], 2 ** m["stem_convs"] * 2 ** (len(m["dims"]) - 1)
    if size % (2 ** m["stem_convs"]) or size // stride < 1:
        raise ConfigError(f"'monet.stem_convs': {m['stem_convs']} with {len(m['dims'])} stages downsamples "
                          f"{size}-pixel images below one token (allowed: total stride <= {size})")
    for group, needed in CLAIMED_VARIANTS.items():
        listed = m["variants"] if group == "monet" else cfg["flat"]["kinds"]
        if missing := [v for v in needed if v not in listed]:
            key = "monet.variants" if group == "monet" else "flat.kinds"
            raise ConfigError(f"'{key}': {missing} missing; the claims read every one of {list(needed)}")
    a = cfg["analysis"]
    if a["claim_k"] not in a["truncation_ks"]:
        raise ConfigError(f"'analysis.claim_k': {a['claim_k']} is not in 'analysis.truncation_ks' "
                          f"(allowed: {', '.join(map(str, a['truncation_ks']))})")
    train = image_facts(cfg["dataset"])["n_train"]
    for group in GROUPS:
        if cfg["train"][group]["batch_size"] > train:
            raise ConfigError(f"'train.{group}.batch_size': {cfg['train'][group]['batch_size']} exceeds the {train} "
                              f"training images (allowed: 1 .. {train})")


def data_path(cfg):
    return f"data/prepared/{cfg['dataset']}.safetensors"


def train_params(cfg, group):
    """The slice of the config one group's training reads: the other group's settings retrain nothing here."""
    keys = ("device", "dataset", "image_shape", "d_input", "n_classes", "seeds", "monet")
    return {"group": group, **{k: cfg[k] for k in keys}, "flat": cfg["flat"] if group == "flat" else {},
            "train": cfg["train"][group]}


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train", script="train", priority=1, wildcards={"group": "|".join(GROUPS)},
             inputs={"data": data_path(cfg)}, outputs=paper.model_files("{group}"),
             params=lambda w: train_params(cfg, w.group)),
    ]


def analyses(paper):
    cfg = paper.cfg
    reads = {f"{group}_{k}": v for group in GROUPS for k, v in paper.model_files(group).items()}
    return [
        Analysis("accuracy", script="analyze_accuracy", reads={**reads, "data": data_path(cfg)},
                 params={"seeds": cfg["seeds"], "device": cfg["device"]}, figures=("accuracy",)),
        Analysis("polynomial", script="analyze_polynomial",
                 reads={"monet": reads["monet_checkpoint"], "flat": reads["flat_checkpoint"], "data": data_path(cfg)},
                 params=cfg["analysis"], figures=("truncation", "eigenvectors")),
    ]
