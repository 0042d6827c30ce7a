# Bilinear MLPs (Pearce et al., ICLR 2025) and the bilinear-layer note (Sharkey, 2023).
# Stages: data -> train (one batched run per experiment) -> analyze -> figures -> report. The data, analyze, figure
# and report rules are shared (shared/pipeline/rules/); the analyses are declared in pipeline.py. The scripts live in
# the paper's parts (image/, theory/, language/) and are named as modules: "image.train".
# This file is a Snakemake module of its own: its rules are named bilinear_mlp_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.bilinear_mlp.pipeline import checkpoint_path, experiments, history_path, image_data

P = config["paper"]


# every run of one experiment in one batched call of shared.train.supervised.train
rule train:
    input:
        code=P.code("image.train"),
        data=lambda w: image_data(P.cfg, w.experiment),
    output:
        checkpoint=checkpoint_path(P, "{experiment}"),
        history=history_path(P, "{experiment}"),
    log:
        P.log("train_{experiment}"),
    wildcard_constraints:
        experiment="|".join(experiments(P.cfg)),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("image.train"),
        p=lambda w: P.params(
            {
                "experiment": w.experiment,
                "spec": P.cfg["experiments"][w.experiment],
                "defaults": P.cfg["defaults"],
                "lr": P.cfg["lr"],
                "device": P.cfg["device"],
                "d_input": P.cfg["d_input"],
                "n_classes": P.cfg["n_classes"],
            }
        ),
    shell:
        step_shell()


# training speed of the image model (never part of the default run; `snakemake benchmarks` collects it)
rule benchmark:
    input:
        code=P.code("image.benchmark"),
    output:
        out="results/benchmarks/bilinear_mlp.json",
    log:
        P.log("benchmark"),
    threads: P.threads("benchmark")
    resources:
        **P.resources("benchmark"),
    params:
        **P.step("image.benchmark"),
        p=P.params({"device": P.cfg["device"]}),
    shell:
        step_shell()


include: "language.smk"
