# implicit_icl_update: <paper title> (<authors>, <venue> <year>).
# Stages: data -> train (one batched run, a model per seed) -> analyze -> figures -> report. The analyze, figure
# and report rules are shared (shared/pipeline/rules/paper.smk); the analyses are declared in pipeline.py.
# This file is a Snakemake module of its own: its rules are named implicit_icl_update_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.implicit_icl_update.pipeline import data_path

P = config["paper"]


rule data:
    input:
        code=P.code("prepare_data"),
    output:
        out=data_path(P),
    log:
        P.log("data"),
    params:
        **P.step("prepare_data"),
        p=P.params({k: P.cfg[k] for k in ("dataset", "test_fraction")}),
    shell:
        step_shell()


rule train:
    input:
        code=P.code("train"),
        data=data_path(P),
    output:
        checkpoint=P.out("models/model.safetensors"),
        history=P.out("models/model.json"),
    log:
        P.log("train"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=P.params({k: v for k, v in P.cfg.items() if k != "analysis"}),
    shell:
        step_shell()
