# implicit_icl_update: Learning without training: the implicit dynamics of in-context learning (Dherin et al., 2025).
# Stages: train (every contextual block, generated prompts, with its untrained copy) -> analyses (identities,
# dynamics, E1 curves, fine-tuning; declared in pipeline.py) -> figures -> report. The analyze, figure and report
# rules are shared (shared/pipeline/rules/paper.smk).
# This file is a Snakemake module of its own: its rules are named implicit_icl_update_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.implicit_icl_update.pipeline import checkpoint_path, history_path

P = config["paper"]


rule train:
    input:
        code=P.code("train"),
    output:
        checkpoint=checkpoint_path(P),
        history=history_path(P),
    log:
        P.log("train"),
    priority: 1
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=P.params({k: v for k, v in P.cfg.items() if k != "analysis"}),
    shell:
        step_shell()
