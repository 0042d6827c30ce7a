# Revisiting Bi-Linear State Transitions in Recurrent Neural Networks (Ebrahimi & Memisevic, NeurIPS 2025).
# Stages: data (task automata + fixed test sets) -> train (one batched run per experiment) -> evaluate across
# lengths -> analyses (accuracy table, eigenvalues of the weights, Prop. 3; declared in pipeline.py) -> figures ->
# report. The analyze, figure and report rules are shared (shared/pipeline/rules/paper.smk).
# This file is a Snakemake module of its own: its rules are named bilinear_rnn_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.bilinear_rnn.pipeline import checkpoint_path, eval_path, experiments, tasks_path

P = config["paper"]


wildcard_constraints:
    experiment="|".join(experiments(P.cfg)),


rule data:
    input:
        code=P.code("prepare_data"),
    output:
        out=tasks_path(P),
    log:
        P.log("data"),
    threads: P.threads("data")
    resources:
        **P.resources("data"),
    params:
        **P.step("prepare_data"),
        p=P.params(
            {
                "tasks": sorted({t for e in P.cfg["experiments"].values() for t in e["tasks"]}),
                "fsm_seed": P.cfg["fsm_seed"],
                "test": P.cfg["test"],
            }
        ),
    shell:
        step_shell()


rule train:
    input:
        code=P.code("train"),
        tasks=tasks_path(P),
    output:
        checkpoint=checkpoint_path(P, "{experiment}"),
        history=P.out("models/{experiment}.json"),
    log:
        P.log("train_{experiment}"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")  # small models: one thread each at the quick tier, several experiments at once
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        # only this experiment's slice of the config, so editing another experiment does not retrain this one
        p=lambda w: P.params(
            {
                "experiment": w.experiment,
                **{k: P.cfg[k] for k in ("device", "d_hidden", "lrs", "schedule")},
                "experiments": {w.experiment: P.cfg["experiments"][w.experiment]},
            }
        ),
    shell:
        step_shell()


rule evaluate:
    input:
        code=P.code("evaluate"),
        checkpoint=checkpoint_path(P, "{experiment}"),
        tasks=tasks_path(P),
    output:
        out=eval_path(P, "{experiment}"),
    log:
        P.log("evaluate_{experiment}"),
    threads: P.threads("evaluate")
    resources:
        **P.resources("evaluate"),
    params:
        **P.step("evaluate"),
        p=P.params({"lengths": P.cfg["test"]["lengths"]}),
    shell:
        step_shell()


# stacked against one-by-one training of the same runs (never part of the default run; `snakemake benchmarks`)
rule benchmark:
    input:
        code=P.code("benchmark"),
    output:
        out="results/benchmarks/bilinear_rnn.json",
    log:
        P.log("benchmark"),
    threads: P.threads("benchmark")
    resources:
        **P.resources("benchmark"),
    params:
        **P.step("benchmark"),
        p=P.params({"device": P.cfg["device"]}),
    shell:
        step_shell()
