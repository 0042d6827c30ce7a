# Bilinear MLPs (Pearce et al., ICLR 2025) and the bilinear-layer note (Sharkey, 2023).
# Stages: data -> train (one batched run per experiment) -> analyze -> figures -> report
# (the data, figure and report rules are shared: shared/pipeline/rules/).
import json

from shared.pipeline.config import load_paper_config, path_args

BMLP = "replications/bilinear_mlp"
BMLP_CFG = load_paper_config(BMLP, TIER, config.get("bilinear_mlp"))
BMLP_RES = f"results/bilinear_mlp/{TIER}"
BMLP_REP = f"reports/bilinear_mlp/{TIER}"
BMLP_EXPERIMENTS = [e for e, spec in BMLP_CFG["experiments"].items() if spec["dataset"] in BMLP_CFG["datasets"]]

# metrics namespace -> (analysis script, experiment, inputs it reads, figures drawn from it)
BMLP_ANALYSES = {
    "identities": ("identities", "base", ["checkpoint", "data"], []),  # or on base_fashion, see below
    "accuracy": ("accuracy", "base", ["history"], ["accuracy"]),
    "spectra": ("spectra", "base", ["checkpoint", "data"], ["eigenvectors", "spectrum"]),
    "accuracy_fashion": ("accuracy", "base_fashion", ["history"], ["accuracy"]),
    "spectra_fashion": ("spectra", "base_fashion", ["checkpoint", "data"], ["eigenvectors", "spectrum"]),
    "noise": ("noise", "noise", ["checkpoint", "history", "data"], ["noise"]),
    "grid": ("grid", "grid", ["checkpoint"], ["grid"]),
    "truncation": ("truncation", "size", ["checkpoint", "data"], ["truncation"]),
    "similarity": ("similarity", "size", ["checkpoint"], ["similarity"]),
    "adversarial": ("adversarial", "adversarial", ["checkpoint", "data"], ["adversarial"]),
    "hosvd": ("hosvd", "base", ["checkpoint"], ["hosvd"]),
    "similarity_task": ("similarity_task", "similarity_task", ["checkpoint", "data"], ["target"]),  # section 4.3
}
if "base" not in BMLP_EXPERIMENTS and "base_fashion" in BMLP_EXPERIMENTS:
    # the identities hold for any trained weights: check them on the Fashion-MNIST models when MNIST is left out
    BMLP_ANALYSES["identities"] = ("identities", "base_fashion", ["checkpoint", "data"], [])
BMLP_RUN = {ns: a for ns, a in BMLP_ANALYSES.items() if a[1] in BMLP_EXPERIMENTS}
BMLP_SKIP = {
    ns: (f"experiment '{a[1]}' is not part of this run: its dataset "
         f"'{BMLP_CFG['experiments'][a[1]]['dataset']}' is not in datasets {BMLP_CFG['datasets']}"
         if a[1] in BMLP_CFG["experiments"] else f"experiment '{a[1]}' is not in the {TIER} tier")
    for ns, a in BMLP_ANALYSES.items() if ns not in BMLP_RUN
}
PAPER_CONFIGS["bilinear_mlp"] = BMLP_CFG
PAPER_METRICS["bilinear_mlp"] = [f"{BMLP_RES}/metrics/{ns}.json" for ns in BMLP_RUN]
PAPER_FIGURES["bilinear_mlp"] = [f"{BMLP_REP}/figures/{fig}_{ns}.png" for ns, a in BMLP_RUN.items() for fig in a[3]]
PAPER_SKIPPED["bilinear_mlp"] = BMLP_SKIP


def bmlp_data(experiment):
    return f"data/prepared/{BMLP_CFG['experiments'][experiment]['dataset']}.safetensors"


rule bilinear_mlp:
    input:
        f"{BMLP_REP}/report.md",


rule bilinear_mlp_train:
    input:
        data=lambda w: bmlp_data(w.experiment),
        script=f"{BMLP}/train.py",
    output:
        checkpoint=f"{BMLP_RES}/models/{{experiment}}.safetensors",
        history=f"{BMLP_RES}/models/{{experiment}}.json",
    params:
        p=lambda w: json.dumps({
            "experiment": w.experiment, "spec": BMLP_CFG["experiments"][w.experiment],
            "defaults": BMLP_CFG["defaults"], "lr": BMLP_CFG["lr"], "device": BMLP_CFG["device"],
            "d_input": BMLP_CFG["d_input"], "n_classes": BMLP_CFG["n_classes"],
        }, sort_keys=True),
    threads: workflow.cores
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{BMLP_RES}/logs/train_{{experiment}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --data {input.data:q} "
        "--checkpoint {output.checkpoint:q} --history {output.history:q} 2> {log:q}"


def bmlp_analysis_inputs(w):
    script, experiment, reads, _ = BMLP_RUN[w.ns]
    paths = {
        "checkpoint": f"{BMLP_RES}/models/{experiment}.safetensors",
        "history": f"{BMLP_RES}/models/{experiment}.json",
        "data": bmlp_data(experiment),
    }
    return {"script": f"{BMLP}/analyze_{script}.py", **{k: paths[k] for k in reads}}


rule bilinear_mlp_analyze:
    input:
        unpack(bmlp_analysis_inputs),
    output:
        metrics=f"{BMLP_RES}/metrics/{{ns}}.json",
        arrays=f"{BMLP_RES}/analysis/{{ns}}.npz",
    wildcard_constraints:
        ns="|".join(BMLP_RUN) or "none",
    params:
        p=json.dumps(BMLP_CFG["analysis"], sort_keys=True),
        paths=lambda w, input: path_args(dict(input.items())),
    threads: 1
    log:
        f"{BMLP_RES}/logs/analyze_{{ns}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} {params.paths} "
        "--metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


# The toy Boolean task (tutorial 0, App L) needs no dataset: its script trains its four tiny models and analyses them
# in one job of seconds.
PAPER_METRICS["bilinear_mlp"].append(f"{BMLP_RES}/metrics/boolean.json")
PAPER_FIGURES["bilinear_mlp"].append(f"{BMLP_REP}/figures/gates_boolean.png")


rule bilinear_mlp_boolean:
    input:
        script=f"{BMLP}/toy_boolean.py",
    output:
        metrics=f"{BMLP_RES}/metrics/boolean.json",
        arrays=f"{BMLP_RES}/analysis/boolean.npz",
    params:
        p=json.dumps(BMLP_CFG["boolean"], sort_keys=True),
    threads: 1
    log:
        f"{BMLP_RES}/logs/boolean.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} "
        "--metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule bilinear_mlp_benchmark:
    input:
        f"{BMLP}/benchmark.py",
    output:
        "results/benchmarks/bilinear_mlp.json",
    threads: workflow.cores
    shell:
        "{PY:q} {input:q} --out {output:q} --device {BMLP_CFG[device]}"


BENCHMARKS.append("results/benchmarks/bilinear_mlp.json")


include: "language.smk"
