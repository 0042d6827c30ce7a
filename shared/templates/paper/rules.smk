# __PAPER__: <paper title> (<authors>, <venue> <year>).
# Stages: data -> train (one batched run, a model per seed) -> analyze -> figures -> report
# (the figure and report rules are shared: shared/rules/common.smk).
# Every rules.smk is included into one workflow, so its globals are shared with every other paper's:
# keep the P___PAPER___ prefix on each variable and p___PAPER___ on each function.
import json

from shared.workflow import load_paper_config, path_args

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
# what the shared config, figure and report rules (shared/rules/common.smk) need from this paper
PAPER_CONFIGS["__PAPER__"] = P___PAPER___CFG
PAPER_METRICS["__PAPER__"] = [f"{P___PAPER___RES}/metrics/{ns}.json" for ns in P___PAPER___ANALYSES]
PAPER_FIGURES["__PAPER__"] = [f"{P___PAPER___REP}/figures/{fig}_{ns}.png" for ns, a in P___PAPER___ANALYSES.items() for fig in a[2]]


rule __PAPER__:
    input:
        f"{P___PAPER___REP}/report.md",


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
        paths=lambda w, input: path_args(dict(input.items())),
    threads: 1
    log:
        f"{P___PAPER___RES}/logs/analyze_{{ns}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} {params.paths} "
        "--metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"
