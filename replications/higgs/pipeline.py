"""higgs: the Python side of its workflow. See shared/pipeline/paper.py.

Two training steps, two analyses: `train_lm` (a SwiGLU transformer on the registry's synthetic stories, the stand-in
for the paper's LLMs) read by `lm`; `train_mlp` (a ReLU MLP on mnist_5k at the quick tier, MNIST at the full tier)
read by `mlp`. Each analysis runs the four experiments (analyze.py) and draws the figures `linearity` and `quant`."""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train_lm": Resources(gpu=True, threads=4, mem_mb=8000, runtime=120),
    "train_mlp": Resources(gpu=True, threads=4, mem_mb=4000, runtime=60),
    "analyze": Resources(gpu=True, threads=2, mem_mb=16000, runtime=240),
}
CLAIMED_BITS = (3, 4)  # the quantizer claims read these bit widths; the allocation claims these budgets
CLAIMED_BUDGETS = (3, 3.5, 4)


def layer_sizes(cfg):
    """Weights per quantized layer of each model (model.quantized_layers)."""
    m, mlp = cfg["lm"]["model"], cfg["mlp"]
    d, h = m["d_model"], m["d_hidden"]
    lm = [3 * d * d, d * d, 2 * h * d, h * d]
    sizes = [mlp["d_input"], *mlp["hidden"], mlp["n_classes"]]
    return {"lm": lm, "mlp": [a * b for a, b in zip(sizes[:-1], sizes[1:])]}


def check(cfg):
    """The MLP agrees with its data; the group is a power of two dividing every layer; the claimed bits, options
    and budgets are run; the transformer's heads have an even size."""
    mlp = cfg["mlp"]
    if problem := shape_mismatch(mlp["dataset"], {"mlp.d_input": mlp["d_input"], "mlp.n_classes": mlp["n_classes"]}):
        raise ConfigError(problem)
    train = image_facts(mlp["dataset"])["n_train"]
    if mlp["batch_size"] > train:
        raise ConfigError(f"'mlp.batch_size': {mlp['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")
    q = cfg["quant"]
    g = q["group"]
    if g & (g - 1):
        raise ConfigError(f"'quant.group': {g} is not a power of two (the Walsh-Hadamard transform needs one)")
    for kind, sizes in layer_sizes(cfg).items():
        if bad := [s for s in sizes if s % g]:
            raise ConfigError(f"'quant.group': {g} does not divide the {kind} layers of {bad} weights "
                              f"(allowed: a power of two dividing every layer)")
    if missing := [b for b in CLAIMED_BITS if b not in q["bits"] or b not in q["options"]]:
        raise ConfigError(f"'quant.bits': {q['bits']} / options {q['options']} lack {missing}; the claims read "
                          f"bits {list(CLAIMED_BITS)}")
    if missing := [b for b in CLAIMED_BUDGETS if b not in q["budgets"]]:
        raise ConfigError(f"'quant.budgets': {q['budgets']} lack {missing}; the claims read {list(CLAIMED_BUDGETS)}")
    if bad := [b for b in q["budgets"] if not min(q["options"]) <= b <= max(q["options"])]:
        raise ConfigError(f"'quant.budgets': {bad} outside the options' range (allowed: "
                          f"{min(q['options'])} .. {max(q['options'])})")
    m = cfg["lm"]["model"]
    if m["d_model"] % m["n_head"] or (m["d_model"] // m["n_head"]) % 2:
        raise ConfigError(f"'lm.model.n_head': d_model {m['d_model']} must split into {m['n_head']} heads of even "
                          f"size (allowed: a divisor of d_model leaving an even head size)")


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train_lm", script="train_lm", priority=1, inputs={"data": f"data/prepared/{cfg['lm']['dataset']}.safetensors"},
             outputs=paper.model_files("lm"), params={"device": cfg["device"], "model": cfg["lm"]["model"],
                                                      "train": cfg["lm"]["train"]}),
        Step("train_mlp", script="train_mlp", priority=1, inputs={"data": f"data/prepared/{cfg['mlp']['dataset']}.safetensors"},
             outputs=paper.model_files("mlp"), params={"device": cfg["device"], "mlp": cfg["mlp"]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    common = {"seed": cfg["seed"], "linearity": cfg["linearity"], "quant": cfg["quant"], "device": cfg["device"]}
    return [
        Analysis("lm", script="analyze", reads={**paper.model_files("lm"),
                                                "data": f"data/prepared/{cfg['lm']['dataset']}.safetensors"},
                 params={**common, "model": "lm", "eval_windows": cfg["lm"]["eval_windows"]},
                 figures=("linearity", "quant")),
        Analysis("mlp", script="analyze", reads={**paper.model_files("mlp"),
                                                 "data": f"data/prepared/{cfg['mlp']['dataset']}.safetensors"},
                 params={**common, "model": "mlp", "n_classes": cfg["mlp"]["n_classes"],
                         "eval_split": cfg["mlp"]["eval_split"]},
                 figures=("linearity", "quant")),
    ]
