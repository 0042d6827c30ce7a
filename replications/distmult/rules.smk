# distmult: Embedding Entities and Relations for Learning and Inference in Knowledge Bases (Yang, Yih, He, Gao,
# Deng; ICLR 2015). Stages: data (the shared prepare_dataset rule for the registry's graphs; family_data for the
# generated one) -> train (one job per graph, every model and seed) -> analyze (declared in pipeline.py) -> figures
# -> report. This file is a Snakemake module of its own: its rules are named distmult_<rule>.
from shared.pipeline.paper import step_shell

from replications.distmult.pipeline import checkpoint_path, data_path

P = config["paper"]


wildcard_constraints:
    graph="|".join(P.cfg["graphs"]),


rule family_data:
    input:
        code=P.code("prepare_family"),
    output:
        out=data_path(P, "family"),
    log:
        P.log("family_data"),
    params:
        **P.step("prepare_family"),
        p=P.params(P.cfg["family"]),
    shell:
        step_shell()


rule train:
    input:
        code=P.code("train"),
        data=lambda w: data_path(P, w.graph),
    output:
        checkpoint=checkpoint_path(P, "{graph}"),
        history=P.out("models/{graph}.json"),
    log:
        P.log("train_{graph}"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        # this graph's slice of the config: editing another graph's models does not retrain it
        p=lambda w: P.params(
            {
                "graph": w.graph,
                "models": P.cfg["graphs"][w.graph],
                "model_specs": {m: P.cfg["model_specs"][m] for m in P.cfg["graphs"][w.graph]},
                **{k: P.cfg[k] for k in ("device", "seeds", "margin", "one_n")},
            }
        ),
    shell:
        step_shell()
