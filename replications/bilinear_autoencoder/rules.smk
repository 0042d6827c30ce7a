# Finding Manifolds With Bilinear Autoencoders (Dooms & Gauderis, arXiv 2510.16820).
# Stages: activations (planted manifolds; the flagship bilinear_mlp's trained MNIST classifier, read from its
# checkpoint; or a language model's residual stream at the full tier) -> train (every kind x sparsity penalty with
# Muon, plus TopK SAEs) -> analyses (held-out Pareto and the closed form; prefix ordering; manifolds from the
# weights) -> figures -> report. The analyze, figure and report rules are shared (shared/pipeline/rules/paper.smk);
# the analyses are declared in pipeline.py. This file is a Snakemake module of its own: its rules are named
# bilinear_autoencoder_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.bilinear_autoencoder.pipeline import (
    checkpoint_path,
    data_inputs,
    data_path,
    data_script,
    history_path,
    runs,
)

P = config["paper"]


# The activations one dataset's autoencoders decompose (a flagship source reads bilinear_mlp's checkpoint: its
# own rule trains it if missing).
rule data:
    input:
        unpack(lambda w: {"code": P.code(data_script(P.cfg, w.dataset)), **data_inputs(P, w.dataset)}),
    output:
        out=data_path(P),
    log:
        P.log("data_{dataset}"),
    wildcard_constraints:
        dataset="|".join(P.cfg["datasets"]),
    threads: P.threads("data")
    resources:
        **P.resources("data"),
    params:
        **P.step(lambda w: data_script(P.cfg, w.dataset)),
        p=lambda w: P.params({"name": w.dataset, "spec": P.cfg["datasets"][w.dataset], "device": P.cfg["device"]}),
    shell:
        step_shell()


# Every autoencoder of one dataset in one job: the bilinear ones (kinds x alphas) and the TopK SAEs.
rule train:
    input:
        code=P.code("train"),
        data=data_path(P),
    output:
        checkpoint=checkpoint_path(P),
        history=history_path(P),
    log:
        P.log("train_{dataset}"),
    wildcard_constraints:
        dataset="|".join(P.cfg["datasets"]),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")  # small autoencoders at the quick tier: one thread each, two datasets at once
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=lambda w: P.params(
            {
                "dataset": w.dataset,
                "runs": runs(P.cfg),
                "device": P.cfg["device"],
                "expansion": P.cfg["datasets"][w.dataset].get("expansion", P.cfg["expansion"]),
                **{k: P.cfg[k] for k in ("bottleneck", "train", "topk")},
            }
        ),
    shell:
        step_shell()
