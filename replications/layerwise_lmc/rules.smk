# Layer-wise Linear Mode Connectivity (Adilova, Andriushchenko, Kamp, Fischer, Jaggi, ICLR 2024).
# Stages: train (one job per experiment: a pair A, B saved at its checkpoint epochs) -> analyze (declared in
# pipeline.py) -> figures -> report. The registry's prepare_dataset, analyze, figure and report rules are shared.
# This file is a Snakemake module of its own: its rules are named layerwise_lmc_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.layerwise_lmc.pipeline import checkpoint_path, data_path, history_path

P = config["paper"]


rule train:
    input:
        code=P.code("train"),
        data=lambda w: data_path(P.cfg, w.experiment),
    output:
        checkpoint=checkpoint_path(P, "{experiment}"),
        history=history_path(P, "{experiment}"),
    log:
        P.log("train_{experiment}"),
    wildcard_constraints:
        experiment="|".join(P.cfg["experiments"]),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        # only this experiment's slice of the config: editing another experiment retrains nothing here
        p=lambda w: P.params(
            {
                "experiment": w.experiment,
                "device": P.cfg["device"],
                "cfg": {
                    "train": P.cfg["train"],
                    "seeds": P.cfg["seeds"],
                    "width": P.cfg["width"],
                    "experiments": {w.experiment: P.cfg["experiments"][w.experiment]},
                },
            }
        ),
    shell:
        step_shell()
