# li2_grokking: Provable Scaling Laws of Feature Emergence from Learning Dynamics of Grokking (Tian, 2025).
# Stages: train (one job per experiment: grok, width, scaling<M>; tables generated on the fly) -> analyze
# (grokking, scaling; declared in pipeline.py) -> figures -> report. The analyze, figure and report rules are
# shared (shared/pipeline/rules/paper.smk).
# This file is a Snakemake module of its own: its rules are named li2_grokking_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.li2_grokking.pipeline import (
    EXPERIMENT_PATTERN,
    checkpoint_path,
    history_path,
)

P = config["paper"]


wildcard_constraints:
    experiment=EXPERIMENT_PATTERN,


rule train:
    input:
        code=P.code("train"),
    output:
        checkpoint=checkpoint_path(P, "{experiment}"),
        history=history_path(P, "{experiment}"),
    log:
        P.log("train_{experiment}"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        # only this experiment's slice of the config, so editing another experiment does not retrain this one
        p=lambda w: P.params(
            {
                "experiment": w.experiment,
                **{k: P.cfg[k] for k in ("device", "activation", "lr", "critical_c")},
                "analysis": P.cfg["analysis"],
                "section": P.cfg["scaling" if w.experiment.startswith("scaling") else w.experiment],
            }
        ),
    shell:
        step_shell()
