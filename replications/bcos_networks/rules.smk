# bcos_networks: B-cos Networks: Alignment is All We Need for Interpretability (Böhle, Fritz, Schiele; CVPR 2022).
# Stages: data (quick: prepare_data.py; full: the shared prepare_dataset rule) -> train (one job per arm and seed)
# -> analyze (declared in pipeline.py) -> figures -> report. The analyze, figure and report rules are shared.
from shared.pipeline.paper import step_shell

from replications.bcos_networks.pipeline import checkpoint_path, data_path, history_path, train_params

P = config["paper"]


wildcard_constraints:
    arm="relu|B[0-9p]+",
    seed=r"\d+",


if P.cfg["dataset"] == "digits":

    rule data:
        input:
            code=P.code("prepare_data"),
        output:
            out=data_path(P),
        log:
            P.log("data"),
        params:
            **P.step("prepare_data"),
            p=P.params({"dataset": "digits", "test_fraction": P.cfg["test_fraction"]}),
        shell:
            step_shell()


rule train:
    input:
        code=P.code("train"),
        data=data_path(P),
    output:
        checkpoint=checkpoint_path(P, "{arm}", "{seed}"),
        history=history_path(P, "{arm}", "{seed}"),
    log:
        P.log("train_{arm}_s{seed}"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=lambda w: P.params(train_params(P.cfg, w.arm, int(w.seed))),
    shell:
        step_shell()
