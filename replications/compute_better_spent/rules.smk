# compute_better_spent: Compute Better Spent: Replacing Dense Layers with Structured Matrices (Qiu, Potapczynski,
# Finzi, Goldblum, Wilson; ICML 2024).
# Stages: data (shared prepare_dataset) -> tune -> train (one job per lr arm) -> analyze -> figures -> report.
# The analyze, figure and report rules are shared (shared/pipeline/rules/paper.smk); the analyses are in pipeline.py.
from shared.pipeline.paper import step_shell

from replications.compute_better_spent.pipeline import (
    ARMS,
    data_path,
    history_path,
    train_params,
    tune_path,
)

P = config["paper"]


rule tune:
    input:
        code=P.code("tune"),
        data=data_path(P.cfg),
    output:
        out=tune_path(P),
    log:
        P.log("tune"),
    priority: 2
    threads: P.threads("tune")
    resources:
        **P.resources("tune"),
    params:
        **P.step("tune"),
        p=P.params({**train_params(P.cfg), "lr_grid": P.cfg["lr_grid"]}),
    shell:
        step_shell()


rule train:
    input:
        code=P.code("train"),
        data=data_path(P.cfg),
        lr=tune_path(P),
    output:
        out=history_path(P, "{arm}"),
    log:
        P.log("train_{arm}"),
    wildcard_constraints:
        arm="|".join(ARMS),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=lambda w: P.params({**train_params(P.cfg), "arm": w.arm, "widths": P.cfg["widths"]}),
    shell:
        step_shell()


# The layer benchmark: BTT and Monarch FLOP/s over dense at equal FLOPs (never part of the default run;
# `snakemake benchmarks`)
rule benchmark:
    input:
        code=P.code("benchmark"),
    output:
        out="results/benchmarks/compute_better_spent.json",
    log:
        P.log("benchmark"),
    threads: P.threads("benchmark")
    resources:
        **P.resources("benchmark"),
    params:
        **P.step("benchmark"),
        p=P.params({"device": P.cfg["device"], **P.cfg["benchmark"]}),
    shell:
        step_shell()
