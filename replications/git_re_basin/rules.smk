# Git Re-Basin: Merging Models modulo Permutation Symmetries (Ainsworth, Hayase, Srinivasa; ICLR 2023).
# Stages: data (the shared prepare_dataset rule) -> train (one job per kind and width, two seeds each) -> analyze
# (declared in pipeline.py) -> figures -> report. The analyze, figure and report rules are shared.
# This file is a Snakemake module of its own: its rules are named git_re_basin_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.git_re_basin.pipeline import checkpoint_path, data_path

P = config["paper"]


wildcard_constraints:
    kind="relu|bilinear",
    width=r"\d+",


rule train:
    input:
        code=P.code("train"),
        data=data_path(P),
    output:
        checkpoint=checkpoint_path(P, "{kind}", "{width}"),
        history=P.out("models/{kind}_h{width}.json"),
    log:
        P.log("train_{kind}_h{width}"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        # this job's slice of the config: editing another width's settings does not retrain it
        p=lambda w: P.params(
            {
                "kind": w.kind,
                "width": int(w.width),
                "snapshot_epochs": (
                    P.cfg["snapshots"]["epochs"]
                    if w.kind == "relu" and int(w.width) == P.cfg["snapshots"]["width"]
                    else []
                ),
                **{k: P.cfg[k] for k in ("device", "d_input", "n_classes", "n_hidden", "seeds", "optim")},
            }
        ),
    shell:
        step_shell()
