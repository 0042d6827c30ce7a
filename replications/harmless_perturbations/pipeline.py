"""harmless_perturbations: the Python side of its workflow. See shared/pipeline/paper.py.

Two training jobs (the MLPs, one per seed; the CNN) and two analyses: `mlp` (null space of the first and later
layers, harmless vs random vs adversarial perturbations, the ReLU's local expansion, model identification) and
`conv` (the operators of the strided and the stride-1 convolution on their input shapes).
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=120),
    "analyze": Resources(gpu=False, threads=4, mem_mb=16000, runtime=60),
}

KINDS = ("mlp", "cnn")


def check(cfg):
    """Cross-key checks: the data's shape; a first layer with fewer outputs than inputs (else nothing is harmless)."""
    if problem := shape_mismatch(cfg["dataset"], {key: cfg[key] for key in ("d_input", "n_classes", "image_shape")}):
        raise ConfigError(problem)
    data = image_facts(cfg["dataset"])
    shape, pixels, train = data["image_shape"], data["d_input"], data["n_train"]
    if cfg["mlp"]["hidden"][0] >= pixels:
        raise ConfigError(f"'mlp.hidden': first width {cfg['mlp']['hidden'][0]} leaves no null space "
                          f"(allowed: 1 .. {pixels - 1})")
    c = cfg["cnn"]
    if shape[1] % c["kernel"] or c["channels"] >= shape[0] * c["kernel"] ** 2:
        raise ConfigError(f"'cnn': kernel {c['kernel']} must divide the side {shape[1]} and channels "
                          f"{c['channels']} stay below {shape[0] * c['kernel'] ** 2} (c k^2), so conv1 has a null space")
    if len(cfg["mlp"]["seeds"]) < 2:
        raise ConfigError(f"'mlp.seeds': {cfg['mlp']['seeds']} needs at least 2 models for identification")
    a = cfg["analysis"]
    if a["flip_eps"] not in a["eps_grid"]:
        raise ConfigError(f"'analysis.flip_eps': {a['flip_eps']} is not in eps_grid (allowed: {a['eps_grid']})")
    if cfg["optim"]["batch_size"] > train:
        raise ConfigError(f"'optim.batch_size': {cfg['optim']['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")


def data_path(paper):
    return f"data/prepared/{paper.cfg['dataset']}.safetensors"


def checkpoint_path(paper, kind):
    return paper.model_files(kind)["checkpoint"]


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train", script="train", priority=1, wildcards={"kind": "|".join(KINDS)},
             inputs={"data": data_path(paper)},
             outputs=paper.model_files("{kind}"),
             # this job's slice of the config: editing the CNN does not retrain the MLPs
             params=lambda w: {"kind": w.kind, w.kind: cfg[w.kind],
                               **{k: cfg[k] for k in ("device", "d_input", "n_classes", "image_shape", "optim")}}),
    ]


def analyses(paper):
    data = data_path(paper)
    return [
        Analysis("mlp", script="analyze_mlp", reads={"checkpoint": checkpoint_path(paper, "mlp"), "data": data},
                 params=paper.cfg["analysis"], figures=("perturbations", "output_change", "local_dim")),
        Analysis("conv", script="analyze_conv", reads={"checkpoint": checkpoint_path(paper, "cnn"), "data": data},
                 params=paper.cfg["analysis"], figures=("conv_spectrum",)),
    ]
