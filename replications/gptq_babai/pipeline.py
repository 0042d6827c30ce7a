"""gptq_babai: the Python side of its workflow. See shared/pipeline/paper.py.

One training step (`train`: the MLP on the registry's mnist_5k at the quick tier, MNIST at the full tier) and two
analyses: `random` (random layers generated in the job, no training) and `mlp` (the trained MLP's layers with their
own inputs as calibration data). Both draw the figure `bound`."""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=4000, runtime=60),
    "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=60),
}
CLAIMED_BITS = (2, 3)  # the accuracy claims read these bit widths


def check(cfg):
    """The data agree with the model; the claimed bit widths are run; calibration and batches fit the training split;
    the lazy block is not larger than a layer."""
    if problem := shape_mismatch(cfg["dataset"], {"d_input": cfg["d_input"], "n_classes": cfg["n_classes"]}):
        raise ConfigError(problem)
    train = image_facts(cfg["dataset"])["n_train"]
    if cfg["batch_size"] > train:
        raise ConfigError(f"'batch_size': {cfg['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")
    q = cfg["quant"]
    if q["calibration"] > train:
        raise ConfigError(f"'quant.calibration': {q['calibration']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")
    if missing := [b for b in CLAIMED_BITS if b not in q["bits"]]:
        raise ConfigError(f"'quant.bits': {q['bits']} lacks {missing}; the claims read bits {list(CLAIMED_BITS)}")
    if q["block"] > cfg["random"]["n"]:
        raise ConfigError(f"'quant.block': {q['block']} exceeds random.n = {cfg['random']['n']} "
                          f"(allowed: 1 .. {cfg['random']['n']})")


def data_path(paper):
    return f"data/prepared/{paper.cfg['dataset']}.safetensors"


def steps(paper):
    cfg = paper.cfg
    keys = ("device", "d_input", "n_classes", "hidden", "lr", "weight_decay", "epochs", "batch_size", "seeds")
    return [Step("train", script="train", priority=1, inputs={"data": data_path(paper)},
                 outputs=paper.model_files("mlp"), params={k: cfg[k] for k in keys})]


def analyses(paper):
    cfg = paper.cfg
    return [
        Analysis("random", script="analyze_random", params={"random": cfg["random"], "quant": cfg["quant"]},
                 figures=("bound",)),
        Analysis("mlp", script="analyze_mlp", reads={**paper.model_files("mlp"), "data": data_path(paper)},
                 params={"quant": cfg["quant"]}, figures=("bound",)),
    ]
