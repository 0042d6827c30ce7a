"""dwsnets: the Python side of its workflow. See shared/pipeline/paper.py.

inrs (one job per task: sine INRs, or MNIST / Fashion-MNIST INRs at the full tier, fitted as stacked models and
cached) -> train (one job per task and model kind; every training-set size of the learning curve) -> analyses
(sine: the learning curves and orderings; identities: equivariance, invariance, completeness; mnist /
fashion_mnist: accuracies, full tier) -> figures -> report. The INR-fitting benchmark (step benchmark) runs only
under `snakemake benchmarks`.
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "inrs": Resources(gpu=True, threads=4, mem_mb=16000, runtime=120),
    "train": Resources(gpu=True, threads=4, mem_mb=16000, runtime=360),
    "analyze": Resources(),
    "benchmark": Resources(gpu=False, runtime=30),  # one thread: the quick tier fits INRs on one core
}
BENCHMARKS = ("dwsnets",)  # results/benchmarks/dwsnets.json: step benchmark
IMAGE_TASKS = ("mnist", "fashion_mnist")

# Experiments of the paper this replication does not run: namespace -> reason (their claims read NOT RUN)
NOT_RUN = {
    "inr2vec": "INR2Vec (De Luigi et al., 2023) is not implemented here (a separate encoder architecture)",
    "transformer": "the Transformer baseline of Schürholt et al. (2021) is not implemented here",
    "ssl": "the self-supervised sine-INR experiment (SimCLR on INR weights) is not run",
    "adaptation": "the CIFAR-10 domain-adaptation experiment needs the authors' trained classifiers (not released "
                  "as code) and is not run",
    "views": "INRs with several views per image (the appendix table) are not generated",
}


def check(cfg):
    s = cfg["sine"]
    if s["freq_low"] >= s["freq_high"]:
        raise ConfigError(f"'sine.freq_low': {s['freq_low']} is not below sine.freq_high = {s['freq_high']} "
                          f"(allowed: freq_low < freq_high)")
    if cfg["identity"]["n_inrs"] > s["n_test"]:
        raise ConfigError(f"'identity.n_inrs': {cfg['identity']['n_inrs']} exceeds the {s['n_test']} test INRs "
                          f"(allowed: 1 .. {s['n_test']})")
    for kind in ("dws", "mlp"):
        if kind not in cfg["kinds"]:
            raise ConfigError(f"'kinds': {kind!r} is missing (allowed: lists holding dws and mlp; the identities "
                              f"read both)")
    c = cfg["classification"]
    if c["datasets"]:
        for key in ("train_images", "test_images", "n_train", "optim"):
            if key not in c:
                raise ConfigError(f"'classification.{key}' is missing (allowed: required when datasets is set)")
        if max(c["n_train"]) > c["train_images"]:
            raise ConfigError(f"'classification.n_train': {max(c['n_train'])} exceeds train_images = "
                              f"{c['train_images']} (allowed: 1 .. {c['train_images']})")


def inr_path(paper, task):
    return paper.out(f"data/{task}_inrs.safetensors")


def model_path(paper, task, kind, ext="safetensors"):
    return paper.out(f"models/{task}_{kind}.{ext}")


def inr_params(cfg, task):
    keep = ("seed", "chunk", "inr", "device")
    p = {k: cfg[k] for k in keep}
    p["task"] = task
    if task == "sine":
        p["sine"] = cfg["sine"]
    else:
        p["classification"] = {k: cfg["classification"][k] for k in ("train_images", "test_images")}
    return p


def train_params(cfg, task, kind):
    c = cfg["classification"]
    sine = task == "sine"
    return {"task": task, "kind": kind, "seed": cfg["seed"], "device": cfg["device"], "model": cfg["models"][kind],
            "n_train": cfg["sine"]["n_train"] if sine else c["n_train"], "optim": cfg["optim"] if sine else c["optim"],
            "n_classes": c["n_classes"]}


def steps(paper):
    cfg = paper.cfg
    return [
        Step("sine_inrs", script="make_inrs", resources="inrs", priority=2, log="inrs_sine",
             outputs={"out": inr_path(paper, "sine")}, params=inr_params(cfg, "sine")),
        Step("image_inrs", script="make_inrs", resources="inrs", priority=2, log="inrs_{task}",
             wildcards={"task": "|".join(IMAGE_TASKS)}, inputs={"images": "data/prepared/{task}.safetensors"},
             outputs={"out": inr_path(paper, "{task}")}, params=lambda w: inr_params(cfg, w.task)),
        Step("train", script="train", priority=1,
             wildcards={"task": "sine|" + "|".join(IMAGE_TASKS), "kind": "dws|mlp_aug|mlp_align|mlp|stats"},
             inputs={"data": inr_path(paper, "{task}")},
             outputs={"checkpoint": model_path(paper, "{task}", "{kind}"),
                      "history": model_path(paper, "{task}", "{kind}", "json")},
             params=lambda w: train_params(cfg, w.task, w.kind)),
        # INR fitting, stacked against one by one (never part of the default run; `snakemake benchmarks`)
        Step("benchmark", script="benchmark", outputs={"out": "results/benchmarks/dwsnets.json"},
             params={"device": cfg["device"], "seed": cfg["seed"], "inr": cfg["inr"], "sine": cfg["sine"],
                     **cfg["benchmark"]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    hist = lambda task: [model_path(paper, task, k, "json") for k in cfg["kinds"]]
    out = [
        Analysis("sine", script="analyze_sine", reads={"histories": hist("sine")},
                 params={"kinds": cfg["kinds"], "freq": [cfg["sine"]["freq_low"], cfg["sine"]["freq_high"]]},
                 figures=("learning_curve",)),
        Analysis("identities", script="analyze_identities",
                 reads={"dws": model_path(paper, "sine", "dws"), "mlp": model_path(paper, "sine", "mlp"),
                        "data": inr_path(paper, "sine")},
                 params={**cfg["identity"], "w0": cfg["inr"]["w0"], "seed": cfg["seed"]}),
    ]
    for task in cfg["classification"]["datasets"]:
        out.append(Analysis(task, script="analyze_classify", reads={"histories": hist(task)},
                            params={"kinds": cfg["kinds"]}))
    return out


def skipped(paper):
    """Namespaces of experiments this tier does not run, with the reason (their claims read NOT RUN)."""
    out = dict(NOT_RUN)
    for task in IMAGE_TASKS:
        if task not in paper.cfg["classification"]["datasets"]:
            out[task] = (f"{task} INR classification runs at the full tier only (55k INRs fitted on 28x28 images "
                         f"and a 4-layer DWSNet: GPU hours, not CPU minutes)")
    return out
