# Finding Manifolds With Bilinear Autoencoders (Dooms & Gauderis, arXiv 2510.16820).
# Stages: activations (planted manifolds; the flagship bilinear_mlp's trained MNIST classifier, read from its
# checkpoint; or a language model's residual stream at the full tier) -> train (every kind x sparsity penalty with
# Muon, plus TopK SAEs) -> analyses (held-out Pareto and the closed form; prefix ordering; manifolds from the
# weights) -> figures -> report (the figure and report rules are shared: shared/pipeline/rules/common.smk).
# Globals carry the BAE prefix: every paper's rules.smk shares one namespace.
import json

from shared.pipeline.config import ConfigError, load_paper_config

BAE = "replications/bilinear_autoencoder"
BAE_CFG = load_paper_config(BAE, TIER, config.get("bilinear_autoencoder"))
BAE_RES = f"results/bilinear_autoencoder/{TIER}"
BAE_REP = f"reports/bilinear_autoencoder/{TIER}"
BAE_DATASETS = BAE_CFG["datasets"]
BAE_CODE = [f"{BAE}/common.py"]  # paper-local module: an edit re-runs what imports it


def bae_run_name(kind, alpha):
    return f"{kind}_a{round(100 * alpha)}"


BAE_RUNS = [{"name": bae_run_name(k, a), "kind": k, "alpha": a, "seed": BAE_CFG["seed"]}
            for k in BAE_CFG["kinds"] for a in sorted(BAE_CFG["alphas"])]


def bae_check_config(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    where = f"bilinear_autoencoder ({TIER} tier): invalid config key"
    names = {r["name"] for r in BAE_RUNS}
    analysis = cfg["analysis"]
    for key, name in (("prefix.ordered", analysis["prefix"]["ordered"]), ("prefix.vanilla", analysis["prefix"]["vanilla"]),
                      ("manifold.model", analysis["manifold"]["model"])):
        if name not in names:
            raise ConfigError(f"{where} 'analysis.{key}': {name!r} is not a trained run (kinds x alphas: {', '.join(sorted(names))})")
    if not analysis["prefix"]["ordered"].startswith(("ordered", "combined")):
        raise ConfigError(f"{where} 'analysis.prefix.ordered': {analysis['prefix']['ordered']!r} is not an ordered kind")
    if not analysis["manifold"]["model"].startswith(("mixed", "combined")):
        raise ConfigError(f"{where} 'analysis.manifold.model': {analysis['manifold']['model']!r} has no mixing matrix")
    if analysis["prefix"]["chunks"] % 16:  # the prefix metrics read k = n/16, n/8, n/4 at chunk boundaries
        raise ConfigError(f"{where} 'analysis.prefix.chunks': {analysis['prefix']['chunks']} must be a multiple of 16")
    if analysis["compare_kind"] not in cfg["kinds"]:
        raise ConfigError(f"{where} 'analysis.compare_kind': {analysis['compare_kind']!r} is not in 'kinds'")
    for name, spec in cfg["datasets"].items():
        if spec["source"] == "planted":
            counts = spec["counts"]
            used = 3 * (counts["circle"] + counts["triangle"] + counts["cluster"]) + counts["direction"]
            if spec["test"] < analysis["batch_size"]:
                raise ConfigError(f"{where} 'datasets.{name}.test': {spec['test']} is fewer than one held-out batch "
                                  f"(analysis.batch_size = {analysis['batch_size']})")
            if used > spec["d"]:
                raise ConfigError(f"{where} 'datasets.{name}.d': {spec['d']} is fewer than the {used} dimensions the components need")


bae_check_config(BAE_CFG)

# metrics namespace -> figures drawn from its arrays (plot_<figure>.py)
BAE_FIGURES = {}
for name, spec in BAE_DATASETS.items():
    BAE_FIGURES[f"pareto_{name}"] = ["pareto"]
    BAE_FIGURES[f"prefix_{name}"] = ["prefix"]
    BAE_FIGURES[f"manifold_{name}"] = ["manifold", "gram"] if spec["source"] == "planted" else ["gram"]
PAPER_CONFIGS["bilinear_autoencoder"] = BAE_CFG
PAPER_METRICS["bilinear_autoencoder"] = [f"{BAE_RES}/metrics/{ns}.json" for ns in BAE_FIGURES]
PAPER_FIGURES["bilinear_autoencoder"] = [f"{BAE_REP}/figures/{fig}_{ns}.png" for ns, figs in BAE_FIGURES.items() for fig in figs]


def bae_data_inputs(w):
    spec = BAE_DATASETS[w.dataset]
    if spec["source"] == "bilinear_mlp":  # the flagship's own pipeline output: its rule trains it if missing
        return {"checkpoint": f"results/bilinear_mlp/{TIER}/models/{spec['experiment']}.safetensors",
                "images": "data/prepared/mnist_5k.safetensors"}
    return {}


rule bilinear_autoencoder:
    input:
        f"{BAE_REP}/report.md",


rule bilinear_autoencoder_data:
    input:
        unpack(bae_data_inputs),
        script=lambda w: f"{BAE}/lm_activations.py" if BAE_DATASETS[w.dataset]["source"] == "language_model" else f"{BAE}/prepare_data.py",
        planted=f"{BAE}/planted.py",
    output:
        f"{BAE_RES}/data/{{dataset}}.safetensors",
    wildcard_constraints:
        dataset="|".join(BAE_DATASETS),
    params:
        p=lambda w, input: json.dumps({"name": w.dataset, "spec": BAE_DATASETS[w.dataset],
                                       **{k: input[k] for k in ("checkpoint", "images") if k in input.keys()},
                                       "device": BAE_CFG["device"]}, sort_keys=True),
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{BAE_RES}/logs/data_{{dataset}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --out {output:q} > {log:q} 2>&1"


rule bilinear_autoencoder_train:
    input:
        data=f"{BAE_RES}/data/{{dataset}}.safetensors",
        script=f"{BAE}/train.py",
        helpers=BAE_CODE,
    output:
        checkpoint=f"{BAE_RES}/models/{{dataset}}.safetensors",
        history=f"{BAE_RES}/models/{{dataset}}.json",
    wildcard_constraints:
        dataset="|".join(BAE_DATASETS),
    params:
        p=lambda w: json.dumps({"dataset": w.dataset, "runs": BAE_RUNS, "device": BAE_CFG["device"],
                                "expansion": BAE_DATASETS[w.dataset].get("expansion", BAE_CFG["expansion"]),
                                **{k: BAE_CFG[k] for k in ("bottleneck", "train", "topk")}}, sort_keys=True),
    threads: 1 if TIER == "quick" else workflow.cores  # small autoencoders: one thread each, two datasets at once
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{BAE_RES}/logs/train_{{dataset}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --data {input.data:q} "
        "--checkpoint {output.checkpoint:q} --history {output.history:q} > {log:q} 2>&1"


for bae_analysis, bae_key in (("pareto", None), ("prefix", "prefix"), ("manifold", "manifold")):

    rule:
        name:
            f"bilinear_autoencoder_{bae_analysis}"
        input:
            checkpoint=f"{BAE_RES}/models/{{dataset}}.safetensors",
            data=f"{BAE_RES}/data/{{dataset}}.safetensors",
            script=f"{BAE}/analyze_{bae_analysis}.py",
            helpers=BAE_CODE,
        output:
            metrics=f"{BAE_RES}/metrics/{bae_analysis}_{{dataset}}.json",
            arrays=f"{BAE_RES}/analysis/{bae_analysis}_{{dataset}}.npz",
        wildcard_constraints:
            dataset="|".join(BAE_DATASETS),
        params:
            p=json.dumps(BAE_CFG["analysis"][bae_key] if bae_key else
                         {k: v for k, v in BAE_CFG["analysis"].items() if k not in ("prefix", "manifold")}, sort_keys=True),
        threads: 1
        log:
            f"{BAE_RES}/logs/{bae_analysis}_{{dataset}}.log",
        shell:
            "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --checkpoint {input.checkpoint:q} "
            "--data {input.data:q} --metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"
