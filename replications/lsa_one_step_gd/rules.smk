# One Step of Gradient Descent is Provably the Optimal In-Context Learner with One Layer of Linear Self-Attention
# (Mahankali, Hashimoto, Ma, ICLR 2024). Stages: train (one job per experiment, prompts generated on the fly) ->
# analyze (preconditioner, risk; declared in pipeline.py) -> figures -> report. The analyze, figure and report
# rules are shared (shared/pipeline/rules/paper.smk).
# This file is a Snakemake module of its own: its rules are named lsa_one_step_gd_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.lsa_one_step_gd.pipeline import EXPERIMENTS, checkpoint_path

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
        # only this experiment's slice of the config, so editing another experiment does not retrain this one
        p=lambda w: P.params(
            {
                "experiment": w.experiment,
                **{k: P.cfg[k] for k in ("device", "model", "optim", "seeds", "basis_seed")},
                "experiments": {w.experiment: P.cfg["experiments"][w.experiment]},
            }
        ),
    shell:
        step_shell()
