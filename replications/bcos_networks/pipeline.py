"""bcos_networks: the Python side of its workflow. See shared/pipeline/paper.py.

data (quick: scikit-learn digits via prepare_data.py; full: the registry's cifar10) -> train (one job per arm and
seed: a B-cos network per B, and the ReLU baseline) -> analyze (accuracy, exactness, alignment, localisation, toy)
-> figures -> report. ImageNet is not run at either tier; CIFAR-10 only at the full tier.
"""
from shared.data.registry import image_facts
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=240),
    "analyze": Resources(gpu=True, threads=4, mem_mb=16000, runtime=60),
}

DIGITS = {"n_classes": 10, "n_train": 1347}  # prepare_data.py's split of scikit-learn's digits (test_fraction 0.25)
IMAGENET_REASON = ("ImageNet (VGG-11, ResNet-34, DenseNet-121, Inception-v3 at B = 2, 100 epochs at batch 256) is not "
                   "run at either tier: registration-only data and far beyond one GPU session")
CIFAR_REASON = "CIFAR-10 is the full tier (the paper's 9-layer network, 100 epochs on one GPU); quick trains on 8x8 digits"


def arm_name(b):
    """'relu' or the B value as a name: 1 -> 'B1', 1.25 -> 'B1p25'."""
    return "relu" if b is None else "B" + f"{b:g}".replace(".", "p")


def arms(cfg):
    """{arm name: B (None for the ReLU baseline)} of the tier."""
    out = {arm_name(b): b for b in cfg["b_values"]}
    return {**out, "relu": None} if cfg["baseline"] else out


def check(cfg):
    data = DIGITS if cfg["dataset"] == "digits" else image_facts(cfg["dataset"])
    classes, train = data["n_classes"], data["n_train"]
    m = cfg["model"]
    if cfg["n_classes"] != classes:
        raise ConfigError(f"'n_classes': {cfg['n_classes']} does not match dataset {cfg['dataset']!r} (allowed: {classes})")
    if cfg["dataset"] == "digits" and "test_fraction" not in cfg:
        raise ConfigError("'test_fraction': missing for dataset 'digits' (allowed: a number in (0, 1))")
    if not len(m["kernels"]) == len(m["strides"]) == len(m["channels"]) + 1:
        raise ConfigError(f"'model.kernels' / 'model.strides': lengths {len(m['kernels'])} / {len(m['strides'])} must "
                          f"be one more than 'model.channels' ({len(m['channels'])}; the last layer maps to the classes)")
    if any(k % 2 == 0 for k in m["kernels"]):
        raise ConfigError(f"'model.kernels': {m['kernels']} has an even kernel (allowed: odd sizes, 'same' padding)")
    for b in (1, 2):
        if b not in cfg["b_values"]:
            raise ConfigError(f"'b_values': {cfg['b_values']} lacks B = {b}, which the claims read (allowed: lists with 1 and 2)")
    if not cfg["baseline"]:
        raise ConfigError("'baseline': false, but claims F5 and F7 read the ReLU baseline (allowed: true)")
    if cfg["batch_size"] > train:
        raise ConfigError(f"'batch_size': {cfg['batch_size']} exceeds the {train} training images (allowed: 1 .. {train})")
    if cfg["calibration_images"] > train:
        raise ConfigError(f"'calibration_images': {cfg['calibration_images']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")
    if cfg["analysis"]["grid"] ** 2 > classes:
        raise ConfigError(f"'analysis.grid': {cfg['analysis']['grid']} needs {cfg['analysis']['grid'] ** 2} different "
                          f"classes per grid (allowed: grid^2 <= {classes})")


def data_path(paper):
    """digits are written by this paper's `data` rule; registry datasets by the shared prepare_dataset rule."""
    if paper.cfg["dataset"] == "digits":
        return paper.out("data/digits.safetensors")
    return f"data/prepared/{paper.cfg['dataset']}.safetensors"


def checkpoint_path(paper, arm, seed):
    return paper.out(f"models/{arm}_s{seed}.safetensors")


def history_path(paper, arm, seed):
    return paper.out(f"models/{arm}_s{seed}.json")


def train_params(cfg, arm, seed):
    """One job's slice of the config: editing another arm's settings does not retrain this one."""
    b = arms(cfg)[arm]
    keys = ("device", "n_classes", "model", "lr", "relu_lr", "lr_min", "calibration_images", "epochs", "batch_size",
            "augment")
    return {"arm": arm, "arch": "relu" if b is None else "bcos", "b": b, "seed": seed, **{k: cfg[k] for k in keys}}


def steps(paper):
    cfg = paper.cfg
    data = []
    if cfg["dataset"] == "digits":  # the full tier's CIFAR-10 comes from the shared prepare_dataset rule
        data = [Step("data", script="prepare_data", outputs={"out": data_path(paper)},
                     params={"dataset": "digits", "test_fraction": cfg["test_fraction"]})]
    return [
        *data,
        Step("train", script="train", priority=1, wildcards={"arm": "relu|B[0-9p]+", "seed": r"\d+"},
             inputs={"data": data_path(paper)}, log="train_{arm}_s{seed}",
             outputs={"checkpoint": checkpoint_path(paper, "{arm}", "{seed}"),
                      "history": history_path(paper, "{arm}", "{seed}")},
             params=lambda w: train_params(cfg, w.arm, int(w.seed))),
    ]


def analyses(paper):
    cfg = paper.cfg
    runs = [(arm, seed) for arm in arms(cfg) for seed in cfg["seeds"]]
    reads = {"checkpoints": [checkpoint_path(paper, a, s) for a, s in runs],
             "histories": [history_path(paper, a, s) for a, s in runs], "data": data_path(paper)}
    out = [Analysis("bcos", script="analyze", reads=reads, params={**cfg["analysis"], "device": cfg["device"]},
                    figures=("against_b", "contributions", "toy"))]
    if cfg["dataset"] == "cifar10":
        out.append(Analysis("cifar10", script="analyze_accuracy", reads={"histories": reads["histories"]}, params={}))
    return out


def skipped(paper):
    out = {"imagenet": IMAGENET_REASON}
    if paper.cfg["dataset"] != "cifar10":
        out["cifar10"] = CIFAR_REASON
    return out
