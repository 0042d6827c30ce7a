# __PAPER__: <paper title> (<authors>, <venue> <year>).
# Stages: data -> train (one batched run, a model per seed) -> analyze -> figures -> report.
# Every rules.smk is included into one workflow, so its globals are shared with every other paper's:
# keep the P___PAPER___ prefix on each variable and p___PAPER___ on each function.
import json

from shared.workflow import load_paper_config

P___PAPER__ = "replications/__PAPER__"
P___PAPER___CFG = load_paper_config(P___PAPER__, TIER, config.get("__PAPER__"))
P___PAPER___RES = f"results/__PAPER__/{TIER}"
P___PAPER___REP = f"reports/__PAPER__/{TIER}"
P___PAPER___DATA = f"{P___PAPER___RES}/data/{P___PAPER___CFG['dataset']}.safetensors"

# metrics namespace (the metrics file's stem, first part of a claim's `metric`) ->
#   (analysis script, inputs it reads, figures drawn from the arrays it writes: plot_<figure>.py)
P___PAPER___ANALYSES = {
    "classifier": ("analyze.py", ["checkpoint", "history", "data"], ["accuracy"]),
}
P___PAPER___FIGURES = [f"{P___PAPER___REP}/figures/{fig}_{ns}.png" for ns, a in P___PAPER___ANALYSES.items() for fig in a[2]]


rule __PAPER__:
    input:
        f"{P___PAPER___REP}/report.md",


rule __PAPER___config:
    output:
        f"{P___PAPER___RES}/config.json",
    params:
        cfg=json.dumps(P___PAPER___CFG, sort_keys=True),
    run:
        from shared.files import write_text

        write_text(output[0], params.cfg + "\n")


rule __PAPER___data:
    input:
        script=f"{P___PAPER__}/prepare_data.py",
    output:
        P___PAPER___DATA,
    params:
        p=json.dumps({k: P___PAPER___CFG[k] for k in ("dataset", "test_fraction")}, sort_keys=True),
    log:
        f"{P___PAPER___RES}/logs/data.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --out {output:q} > {log:q} 2>&1"


rule __PAPER___train:
    input:
        data=P___PAPER___DATA,
        script=f"{P___PAPER__}/train.py",
    output:
        checkpoint=f"{P___PAPER___RES}/models/model.safetensors",
        history=f"{P___PAPER___RES}/models/model.json",
    params:
        p=json.dumps({k: v for k, v in P___PAPER___CFG.items() if k != "analysis"}, sort_keys=True),
    threads: workflow.cores
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{P___PAPER___RES}/logs/train.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --data {input.data:q} "
        "--checkpoint {output.checkpoint:q} --history {output.history:q} 2> {log:q}"


def p___PAPER___analysis_inputs(w):
    script, reads, _ = P___PAPER___ANALYSES[w.ns]
    paths = {
        "checkpoint": f"{P___PAPER___RES}/models/model.safetensors",
        "history": f"{P___PAPER___RES}/models/model.json",
        "data": P___PAPER___DATA,
    }
    return {"script": f"{P___PAPER__}/{script}", **{k: paths[k] for k in reads}}


def p___PAPER___path_args(inputs):
    return " ".join(f"--{k} {v}" for k, v in inputs.items() if k != "script")


rule __PAPER___analyze:
    input:
        unpack(p___PAPER___analysis_inputs),
    output:
        metrics=f"{P___PAPER___RES}/metrics/{{ns}}.json",
        arrays=f"{P___PAPER___RES}/analysis/{{ns}}.npz",
    wildcard_constraints:
        ns="|".join(P___PAPER___ANALYSES) or "none",
    params:
        p=json.dumps(P___PAPER___CFG["analysis"], sort_keys=True),
        paths=lambda w, input: p___PAPER___path_args(dict(input.items())),
    threads: 1
    log:
        f"{P___PAPER___RES}/logs/analyze_{{ns}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} {params.paths} "
        "--metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule __PAPER___figure:
    input:
        arrays=f"{P___PAPER___RES}/analysis/{{ns}}.npz",
        script=f"{P___PAPER__}/plot_{{fig}}.py",
    output:
        report(f"{P___PAPER___REP}/figures/{{fig}}_{{ns}}.png", caption=f"{P___PAPER__}/captions/{{fig}}.rst", category="__PAPER__"),
    wildcard_constraints:
        ns="|".join(P___PAPER___ANALYSES) or "none",
        fig=r"[a-z]+",
    threads: 1
    shell:
        "{PY:q} {input.script:q} --arrays {input.arrays:q} --out {output:q} --title {wildcards.ns}"


rule __PAPER___report:
    input:
        config=f"{P___PAPER___RES}/config.json",
        claims=f"{P___PAPER__}/claims.yaml",
        deviations=f"{P___PAPER__}/deviations.md",
        metrics=[f"{P___PAPER___RES}/metrics/{ns}.json" for ns in P___PAPER___ANALYSES],
        figures=P___PAPER___FIGURES,
    output:
        f"{P___PAPER___REP}/report.md",
        f"{P___PAPER___REP}/claims.csv",
        f"{P___PAPER___REP}/provenance.json",
    shell:
        "{PY:q} -m shared.report render --paper __PAPER__ --tier {TIER} --paper-dir {P___PAPER__} "
        "--metrics {input.metrics} --figures {input.figures} --out-dir {P___PAPER___REP} --config {input.config:q}"
