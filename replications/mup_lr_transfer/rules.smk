# mup_lr_transfer: A Proof of Learning Rate Transfer under muP (Hayou, AISTATS 2026).
# Stages: train (one job per experiment: one-step sweeps, t-step sweeps; data generated on the fly) -> analyze
# (declared in pipeline.py) -> figures -> report. The analyze, figure and report rules are shared.
# This file is a Snakemake module of its own: its rules are named mup_lr_transfer_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.mup_lr_transfer.pipeline import checkpoint_path
from replications.mup_lr_transfer.common import EXPERIMENTS

P = config["paper"]


wildcard_constraints:
    experiment="|".join(EXPERIMENTS),


rule train:
    input:
        code=P.code("train"),
    output:
        checkpoint=checkpoint_path(P, "{experiment}"),
        history=P.out("models/{experiment}.json"),
    log:
        P.log("train_{experiment}"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        # only this experiment's slice of the config, so editing the other experiment does not retrain this one
        p=lambda w: P.params(
            {
                "experiment": w.experiment,
                "device": P.cfg["device"],
                "data": P.cfg["data"],
                "schemes": P.cfg["schemes"],
                w.experiment: P.cfg[w.experiment],
            }
        ),
    shell:
        step_shell()
