# grokking_group_words: Learning words in groups: fusion algebras, tensor ranks and grokking (Shutman, Louidor,
# Tessler, arXiv 2509.06931, 2025). Stages: train (one job per experiment: the grokking sweep and one width sweep per
# group, tables generated on the fly) -> analyze (algebra, grokking, width; declared in pipeline.py) -> figures ->
# report. The analyze, figure and report rules are shared (shared/pipeline/rules/paper.smk).
# This file is a Snakemake module of its own: its rules are named grokking_group_words_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.grokking_group_words.pipeline import checkpoint_path, experiments, history_path

P = config["paper"]


wildcard_constraints:
    experiment="|".join(experiments(P.cfg)),


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
                "device": P.cfg["device"],
                "word": P.cfg["word"],
                **({"grok": P.cfg["grok"]} if w.experiment == "grok" else {"width": P.cfg["width"]}),
            }
        ),
    shell:
        step_shell()
