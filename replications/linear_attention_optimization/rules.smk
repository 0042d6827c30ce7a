# linear_attention_optimization: Linear attention is (maybe) all you need (to understand Transformer optimization)
# (Ahn, Cheng, Song, Yun, Jadbabaie, Sra, ICLR 2024).
# Stages: train (one job per setting: SGD and Adam, every seed, diagnostics along training) -> analyses (declared in
# pipeline.py: optimiser comparison, gradient noise at init, exact identities) -> figures -> report.
# No data rule: prompts are generated on the fly from seeded streams.
from shared.pipeline.paper import step_shell

from replications.linear_attention_optimization.pipeline import checkpoint_path, history_path, settings, train_params

P = config["paper"]


wildcard_constraints:
    setting="|".join(settings(P.cfg)),


rule train:
    input:
        code=P.code("train"),
    output:
        checkpoint=checkpoint_path(P, "{setting}"),
        history=history_path(P, "{setting}"),
    log:
        P.log("train_{setting}"),
    priority: 1
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=lambda w: P.params(train_params(P.cfg, w.setting)),
    shell:
        step_shell()
