# Who Said Neural Networks Aren't Linear? (the Linearizer; Berman, Hallak, Shocher, arXiv 2510.08570).
# Stages: data (generated, scikit-learn's digits, or a registry download) -> train (one job per model: one-step
# flow matching or the projective model) -> analyses (one-step vs many-step sampling, inversion, SVD; exactness of
# the algebra; idempotency) -> figures -> report. The analyze, figure and report rules are shared
# (shared/pipeline/rules/paper.smk); the analyses are declared in pipeline.py.
# This file is a Snakemake module of its own: its rules are named linearizer_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.linearizer.pipeline import data_path, model_data, registry_source

P = config["paper"]


# One dataset, prepared for this paper: a registry dataset is read from data/prepared/ (shared prepare_dataset rule)
rule data:
    input:
        unpack(lambda w: {"source": registry_source(w.dataset)} if registry_source(w.dataset) else {}),
        code=P.code("prepare_data"),
    output:
        out=data_path(P, "{dataset}"),
    log:
        P.log("data_{dataset}"),
    wildcard_constraints:
        dataset="|".join(P.cfg["datasets"]),
    params:
        **P.step("prepare_data"),
        p=lambda w: P.params({"dataset": w.dataset, "spec": P.cfg["datasets"][w.dataset]}),
    shell:
        step_shell()


# One model (its config entry is its slice: editing another model retrains nothing)
rule train:
    input:
        code=P.code("train"),
        data=lambda w: model_data(P, w.model),
    output:
        checkpoint=P.out("models/{model}.safetensors"),
        history=P.out("models/{model}.json"),
    log:
        P.log("train_{model}"),
    wildcard_constraints:
        model="|".join(P.cfg["models"]),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=lambda w: P.params({**P.cfg["models"][w.model], "name": w.model, "device": P.cfg["device"]}),
    shell:
        step_shell()
