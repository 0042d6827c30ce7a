"""layerwise_lmc: the Python side of its workflow. See shared/pipeline/paper.py.

One training job per experiment (a pair A, B of one architecture), then five analyses: the single-layer barriers
over the depth sweep with the shared-init and bilinear pairs (`barriers`), the heat map over training checkpoints
(`training`), cumulative averaging (`cumulative`), the random-direction control (`robustness`) and the deep linear
network of section 4 (`deep_linear`, which trains its tiny float64 models itself).
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=8, mem_mb=16000, runtime=60),  # full: ResNet-18 pair, 60 epochs
    "analyze": Resources(gpu=True, threads=8, mem_mb=16000, runtime=60),  # full: 4 checkpoints x 43 evaluations
}
TRAIN_SIZE = {"mnist_5k": 4000, "mnist": 60000, "cifar10": 50000}
MODEL_DATA = {"mlp": ("mnist_5k", "mnist"), "bilinear": ("mnist_5k", "mnist"), "resnet18_nonorm": ("cifar10",)}


def _train(cfg, name):
    return {**cfg["train"], **cfg["experiments"][name].get("train", {})}


def check(cfg):
    """Cross-key checks: the analyses name trained experiments of the right kind, each model meets its data, the
    checkpoints lie within training, and one analysis reads one dataset."""
    exps, a = cfg["experiments"], cfg["analysis"]
    allowed = ", ".join(sorted(exps))
    for key in ("shared_init", "bilinear", "over_training", "cumulative"):
        if a[key] not in exps:
            raise ConfigError(f"'analysis.{key}': {a[key]!r} is not an experiment (allowed: {allowed})")
    for name in a["depth_sweep"]:
        if name not in exps:
            raise ConfigError(f"'analysis.depth_sweep': {name!r} is not an experiment (allowed: {allowed})")
    for name, spec in exps.items():
        t = _train(cfg, name)
        if t["dataset"] not in MODEL_DATA[spec["model"]]:
            raise ConfigError(f"'experiments.{name}': model {spec['model']} does not take dataset {t['dataset']!r} "
                              f"(allowed: {', '.join(MODEL_DATA[spec['model']])})")
        if spec["model"] != "resnet18_nonorm" and "depth" not in spec:
            raise ConfigError(f"'experiments.{name}.depth': missing (required for model {spec['model']})")
        if t["batch_size"] > TRAIN_SIZE[t["dataset"]]:
            raise ConfigError(f"'experiments.{name}': batch_size {t['batch_size']} exceeds the "
                              f"{TRAIN_SIZE[t['dataset']]} training images (allowed: 1 .. {TRAIN_SIZE[t['dataset']]})")
        late = [c for c in spec.get("checkpoints", []) if c > t["epochs"]]
        if late:
            raise ConfigError(f"'experiments.{name}.checkpoints': {late} beyond its {t['epochs']} epochs "
                              f"(allowed: 0 .. {t['epochs']})")
    sweep = [exps[n] for n in a["depth_sweep"]]
    if any(s["model"] != "mlp" for s in sweep):
        raise ConfigError("'analysis.depth_sweep': every experiment must be a ReLU MLP (model: mlp)")
    depths = [s["depth"] for s in sweep]
    if depths != sorted(set(depths)):
        raise ConfigError(f"'analysis.depth_sweep': depths {depths} must strictly increase")
    if exps[a["shared_init"]]["shared_init"] is not True:
        raise ConfigError(f"'analysis.shared_init': {a['shared_init']!r} is not a shared-init pair")
    if exps[a["bilinear"]]["model"] != "bilinear":
        raise ConfigError(f"'analysis.bilinear': {a['bilinear']!r} is not a bilinear MLP")
    data = {_train(cfg, n)["dataset"] for n in (*a["depth_sweep"], a["shared_init"], a["bilinear"])}
    if len(data) > 1:
        raise ConfigError(f"'analysis': the depth sweep, shared-init and bilinear pairs use datasets {sorted(data)} "
                          f"(allowed: one dataset for all)")
    over = exps[a["over_training"]]
    saved = set(over.get("checkpoints", [])) | {_train(cfg, a["over_training"])["epochs"]}
    if 0 not in saved or not any(e >= a["late_epoch"] for e in saved):
        raise ConfigError(f"'experiments.{a['over_training']}.checkpoints': needs epoch 0 and one epoch >= "
                          f"analysis.late_epoch = {a['late_epoch']} (allowed: a list holding both)")


def checkpoint_path(paper, experiment):
    return paper.model_files(experiment)["checkpoint"]


def history_path(paper, experiment):
    return paper.model_files(experiment)["history"]


def data_path(cfg, experiment):
    return f"data/prepared/{_train(cfg, experiment)['dataset']}.safetensors"


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train", script="train", priority=1, wildcards={"experiment": "|".join(cfg["experiments"])},
             inputs={"data": lambda w: data_path(cfg, w.experiment)},
             outputs=paper.model_files("{experiment}"),
             # only this experiment's slice of the config: editing another experiment retrains nothing here
             params=lambda w: {"experiment": w.experiment, "device": cfg["device"],
                               "cfg": {"train": cfg["train"], "seeds": cfg["seeds"], "width": cfg["width"],
                                       "experiments": {w.experiment: cfg["experiments"][w.experiment]}}}),
    ]


def analyses(paper):
    cfg, a = paper.cfg, paper.cfg["analysis"]
    ck = lambda n: checkpoint_path(paper, n)
    pairs = [*a["depth_sweep"], a["shared_init"], a["bilinear"]]
    params = lambda name: {**a, "device": cfg["device"], "dataset": _train(cfg, name)["dataset"]}
    return [
        Analysis("barriers", script="analyze_barriers",
                 reads={"checkpoints": [ck(n) for n in pairs], "data": data_path(cfg, pairs[0])},
                 params=params(pairs[0]), figures=("heatmap", "heatmap_aligned")),
        Analysis("training", script="analyze_training",
                 reads={"checkpoint": ck(a["over_training"]), "data": data_path(cfg, a["over_training"])},
                 params=params(a["over_training"]), figures=("heatmap_epochs",)),
        Analysis("cumulative", script="analyze_cumulative",
                 reads={"checkpoint": ck(a["cumulative"]), "data": data_path(cfg, a["cumulative"])},
                 params=params(a["cumulative"]), figures=("cumulative",)),
        Analysis("robustness", script="analyze_robustness",
                 reads={"checkpoints": [ck(n) for n in a["depth_sweep"]], "data": data_path(cfg, pairs[0])},
                 params=params(pairs[0]), figures=("robustness",)),
        Analysis("deep_linear", script="analyze_deep_linear", params=cfg["deep_linear"], figures=("deep_linear",)),
    ]
