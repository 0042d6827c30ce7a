# Who Said Neural Networks Aren't Linear? (the Linearizer; Berman, Hallak, Shocher, arXiv 2510.08570).
# Stages: data (generated, scikit-learn's digits, or a registry download) -> train (one job per model: one-step
# flow matching or the projective model) -> analyses (one-step vs many-step sampling, inversion, SVD; exactness of
# the algebra; idempotency) -> figures -> report (the figure and report rules are shared: shared/pipeline/rules/common.smk).
# Globals carry the LIN prefix: every paper's rules.smk shares one namespace.
import json

from shared.data import REGISTRY
from shared.pipeline.config import ConfigError, load_paper_config

LIN = "replications/linearizer"
LIN_CFG = load_paper_config(LIN, TIER, config.get("linearizer"))
LIN_RES = f"results/linearizer/{TIER}"
LIN_REP = f"reports/linearizer/{TIER}"
LIN_MODELS = LIN_CFG["models"]
LIN_ONESTEP = sorted(m for m, spec in LIN_MODELS.items() if spec["kind"] == "onestep")
LIN_PROJECTIVE = sorted(m for m, spec in LIN_MODELS.items() if spec["kind"] == "projective")
LIN_MODEL_CODE = [f"{LIN}/common.py", f"{LIN}/model.py"]  # paper-local modules: an edit re-runs what imports them
LIN_ANALYSIS_CODE = [*LIN_MODEL_CODE, f"{LIN}/sampling.py", f"{LIN}/quality.py"]


def lin_check_config(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    where = f"linearizer ({TIER} tier): invalid config key"
    for name, spec in cfg["models"].items():
        if spec["dataset"] not in cfg["datasets"]:
            raise ConfigError(f"{where} 'models.{name}.dataset': {spec['dataset']!r} has no entry in 'datasets' "
                              f"(allowed: {', '.join(sorted(cfg['datasets']))})")
        if spec["kind"] == "onestep":
            for key in ("time_hidden", "time_embed"):
                if key not in spec["model"]:
                    raise ConfigError(f"{where} 'models.{name}.model.{key}' is required for a onestep model")
            if "sigma" not in spec["train"]:
                raise ConfigError(f"{where} 'models.{name}.train.sigma' is required for a onestep model")
        layout = cfg["datasets"][spec["dataset"]].get("layout")
        if layout == "image" and spec["model"]["flow"]["mixing"] != "linear":
            raise ConfigError(f"{where} 'models.{name}.model.flow.mixing': image flows mix channels with 'linear'")
    if "algebra" in cfg["models"]:
        raise ConfigError(f"{where} 'models.algebra': the name is taken by the algebra analysis's outputs")
    analysis = cfg["analysis"]
    for key, count in (("samples", analysis["samples"]), ("projective.inputs", analysis["projective"]["inputs"])):
        components = analysis["projective"]["components"] if key.startswith("projective") else analysis["components"]
        if count <= components:  # a Frechet distance needs more samples than features
            raise ConfigError(f"{where} 'analysis.{key}': {count} must exceed the {components} principal components")
    algebra = cfg["analysis"]["algebra"]["model"]
    if algebra not in LIN_ONESTEP:
        raise ConfigError(f"{where} 'analysis.algebra.model': {algebra!r} is not a onestep model "
                          f"(allowed: {', '.join(LIN_ONESTEP)})")


lin_check_config(LIN_CFG)


def lin_figures(model):
    if LIN_MODELS[model]["kind"] == "projective":
        return ["projective"]
    return ["toy"] if LIN_MODELS[model]["dataset"] == "eight_gaussians" else ["samples", "singular"]


LIN_FIGURES = {"algebra": ["exactness"], **{m: lin_figures(m) for m in LIN_MODELS}}
PAPER_CONFIGS["linearizer"] = LIN_CFG
PAPER_METRICS["linearizer"] = [f"{LIN_RES}/metrics/{ns}.json" for ns in LIN_FIGURES]
PAPER_FIGURES["linearizer"] = [f"{LIN_REP}/figures/{fig}_{ns}.png" for ns, figs in LIN_FIGURES.items() for fig in figs]


def lin_data(model):
    return f"{LIN_RES}/data/{LIN_MODELS[model]['dataset']}.safetensors"


rule linearizer:
    input:
        f"{LIN_REP}/report.md",


rule linearizer_data:
    input:
        script=f"{LIN}/prepare_data.py",
        source=lambda w: [f"data/prepared/{w.dataset}.safetensors"] if w.dataset in REGISTRY else [],
    output:
        f"{LIN_RES}/data/{{dataset}}.safetensors",
    wildcard_constraints:
        dataset="|".join(LIN_CFG["datasets"]),
    params:
        p=lambda w, input: json.dumps({"dataset": w.dataset, "spec": LIN_CFG["datasets"][w.dataset],
                                       "source": input.source[0] if input.source else None}, sort_keys=True),
    log:
        f"{LIN_RES}/logs/data_{{dataset}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --out {output:q} > {log:q} 2>&1"


rule linearizer_train:
    input:
        data=lambda w: lin_data(w.model),
        script=f"{LIN}/train.py",
        helpers=LIN_MODEL_CODE,
    output:
        checkpoint=f"{LIN_RES}/models/{{model}}.safetensors",
        history=f"{LIN_RES}/models/{{model}}.json",
    wildcard_constraints:
        model="|".join(LIN_MODELS),
    params:
        p=lambda w: json.dumps({**LIN_MODELS[w.model], "device": LIN_CFG["device"]}, sort_keys=True),
    threads: 1 if TIER == "quick" else workflow.cores  # small flows: one thread each, two models at once
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{LIN_RES}/logs/train_{{model}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --data {input.data:q} "
        "--checkpoint {output.checkpoint:q} --history {output.history:q} > {log:q} 2>&1"


rule linearizer_onestep:
    input:
        checkpoint=f"{LIN_RES}/models/{{model}}.safetensors",
        data=lambda w: lin_data(w.model),
        script=f"{LIN}/analyze_onestep.py",
        helpers=LIN_ANALYSIS_CODE,
    output:
        metrics=f"{LIN_RES}/metrics/{{model}}.json",
        arrays=f"{LIN_RES}/analysis/{{model}}.npz",
    wildcard_constraints:
        model="|".join(LIN_ONESTEP),
    params:
        p=lambda w: json.dumps({**{k: v for k, v in LIN_CFG["analysis"].items() if k not in ("algebra", "projective")},
                                "quality": LIN_CFG["datasets"][LIN_MODELS[w.model]["dataset"]]["quality"],
                                "device": LIN_CFG["device"]}, sort_keys=True),
    threads: 1 if TIER == "quick" else workflow.cores
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{LIN_RES}/logs/onestep_{{model}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --checkpoint {input.checkpoint:q} "
        "--data {input.data:q} --metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule linearizer_algebra:
    input:
        checkpoint=f"{LIN_RES}/models/{LIN_CFG['analysis']['algebra']['model']}.safetensors",
        data=lin_data(LIN_CFG["analysis"]["algebra"]["model"]),
        script=f"{LIN}/analyze_algebra.py",
        helpers=LIN_ANALYSIS_CODE,
    output:
        metrics=f"{LIN_RES}/metrics/algebra.json",
        arrays=f"{LIN_RES}/analysis/algebra.npz",
    params:
        p=json.dumps({**LIN_CFG["analysis"]["algebra"], "steps": LIN_CFG["analysis"]["steps"],
                      "device": LIN_CFG["device"]}, sort_keys=True),
    threads: 1
    log:
        f"{LIN_RES}/logs/algebra.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --checkpoint {input.checkpoint:q} "
        "--data {input.data:q} --metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule linearizer_projective:
    input:
        checkpoint=f"{LIN_RES}/models/{{model}}.safetensors",
        data=lambda w: lin_data(w.model),
        script=f"{LIN}/analyze_projective.py",
        helpers=LIN_ANALYSIS_CODE,
    output:
        metrics=f"{LIN_RES}/metrics/{{model}}.json",
        arrays=f"{LIN_RES}/analysis/{{model}}.npz",
    wildcard_constraints:
        model="|".join(LIN_PROJECTIVE) or "none",
    params:
        p=json.dumps({**LIN_CFG["analysis"]["projective"], "grid": 8, "device": LIN_CFG["device"]}, sort_keys=True),
    threads: 1
    log:
        f"{LIN_RES}/logs/projective_{{model}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --checkpoint {input.checkpoint:q} "
        "--data {input.data:q} --metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"
