# Bilinear MLPs (Pearce et al., ICLR 2025) and the bilinear-layer note (Sharkey, 2023).
# Stages: data -> train (one batched run per experiment) -> analyze -> figures -> report.
import json

from shared.workflow import load_paper_config

BMLP = "replications/bilinear_mlp"
BMLP_CFG = load_paper_config(BMLP, TIER, config.get("bilinear_mlp"))
BMLP_RES = f"results/bilinear_mlp/{TIER}"
BMLP_REP = f"reports/bilinear_mlp/{TIER}"
BMLP_EXPERIMENTS = [e for e, spec in BMLP_CFG["experiments"].items() if spec["dataset"] in BMLP_CFG["datasets"]]

# metrics namespace -> (analysis script, experiment, inputs it reads, figures drawn from it)
BMLP_ANALYSES = {
    "identities": ("identities", "base", ["checkpoint", "data"], []),
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
}
BMLP_RUN = {ns: a for ns, a in BMLP_ANALYSES.items() if a[1] in BMLP_EXPERIMENTS}
BMLP_SKIP = {
    ns: (f"experiment '{a[1]}' is not part of this run: its dataset "
         f"'{BMLP_CFG['experiments'][a[1]]['dataset']}' is not in datasets {BMLP_CFG['datasets']}"
         if a[1] in BMLP_CFG["experiments"] else f"experiment '{a[1]}' is not in the {TIER} tier")
    for ns, a in BMLP_ANALYSES.items() if ns not in BMLP_RUN
}
BMLP_FIGURES = [f"{BMLP_REP}/figures/{fig}_{ns}.png" for ns, a in BMLP_RUN.items() for fig in a[3]]


def bmlp_data(experiment):
    return f"data/prepared/{BMLP_CFG['experiments'][experiment]['dataset']}.safetensors"


rule bilinear_mlp:
    input:
        f"{BMLP_REP}/report.md",


rule bilinear_mlp_config:
    output:
        f"{BMLP_RES}/config.json",
    params:
        cfg=json.dumps(BMLP_CFG, sort_keys=True),
    run:
        from shared.files import write_text

        write_text(output[0], params.cfg + "\n")


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


def bmlp_path_args(inputs):
    return " ".join(f"--{k} {v}" for k, v in inputs.items() if k != "script")


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
        paths=lambda w, input: bmlp_path_args(dict(input.items())),
    threads: 1
    log:
        f"{BMLP_RES}/logs/analyze_{{ns}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} {params.paths} "
        "--metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule bilinear_mlp_skip:
    input:
        claims=f"{BMLP}/claims.yaml",
    output:
        f"{BMLP_RES}/metrics/{{ns}}.json",
    wildcard_constraints:
        ns="|".join(BMLP_SKIP) or "none",
    params:
        reason=lambda w: BMLP_SKIP[w.ns],
    shell:
        "{PY:q} -m shared.claims skip --claims {input.claims:q} --namespace {wildcards.ns} "
        "--reason {params.reason:q} --out {output:q}"


rule bilinear_mlp_figure:
    input:
        arrays=f"{BMLP_RES}/analysis/{{ns}}.npz",
        script=f"{BMLP}/plot_{{fig}}.py",
    output:
        report(f"{BMLP_REP}/figures/{{fig}}_{{ns}}.png", caption=f"{BMLP}/captions/{{fig}}.rst", category="bilinear_mlp"),
    wildcard_constraints:
        ns="|".join(BMLP_RUN) or "none",
        fig=r"[a-z]+",
    threads: 1
    shell:
        "{PY:q} {input.script:q} --arrays {input.arrays:q} --out {output:q} --title {wildcards.ns}"


rule bilinear_mlp_report:
    input:
        config=f"{BMLP_RES}/config.json",
        claims=f"{BMLP}/claims.yaml",
        deviations=f"{BMLP}/deviations.md",
        metrics=[f"{BMLP_RES}/metrics/{ns}.json" for ns in BMLP_ANALYSES],
        figures=BMLP_FIGURES,
    output:
        f"{BMLP_REP}/report.md",
        f"{BMLP_REP}/claims.csv",
        f"{BMLP_REP}/provenance.json",
    shell:
        "{PY:q} -m shared.report render --paper bilinear_mlp --tier {TIER} --paper-dir {BMLP} "
        "--metrics {input.metrics} --figures {input.figures} --out-dir {BMLP_REP} --config {input.config:q}"


rule bilinear_mlp_benchmark:
    input:
        f"{BMLP}/benchmark.py",
    output:
        "results/benchmarks/bilinear_mlp.json",
    threads: workflow.cores
    shell:
        "{PY:q} {input:q} --out {output:q} --device {BMLP_CFG[device]}"


BENCHMARKS.append("results/benchmarks/bilinear_mlp.json")
