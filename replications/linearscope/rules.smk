# linearscope: A Tour of Convolutional Networks Guided by Linear Interpreters (Navarrete Michelini, Liu, Lu, Jiang;
# ICCV 2019). Stages: data (the shared prepare_dataset rule) -> train (the three classifiers in one run), train_sr -> analyze (cnn,
# bilinear; declared in pipeline.py) -> figures -> report. The analyze, figure and report rules are shared.
# This file is a Snakemake module of its own: its rules are named linearscope_<rule>, its globals are its own.
from shared.pipeline.paper import step_shell

from replications.linearscope.pipeline import data_path

P = config["paper"]


rule train:
    input:
        code=P.code("train"),
        data=data_path(P),
    output:
        checkpoint=P.out("models/models.safetensors"),
        history=P.out("models/models.json"),
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


rule train_sr:
    input:
        code=P.code("train_sr"),
        data=data_path(P),
    output:
        checkpoint=P.out("models/sr.safetensors"),
        history=P.out("models/sr.json"),
    log:
        P.log("train_sr"),
    threads: P.threads("train_sr")
    resources:
        **P.resources("train_sr"),
    params:
        **P.step("train_sr"),
        p=P.params({k: P.cfg[k] for k in ("device", "dataset", "image", "seed", "sr")}),
    shell:
        step_shell()
