# equivalent_linear_mappings: Equivalent Linear Mappings of Large Language Models (J. R. Golden, TMLR 2025).
# Quick tier: data (shared prepare_dataset) -> train -> analyze (shared rule, analyze_linear_map) -> figures -> report.
# Full tier: analyze (analyze_hf: Qwen3-0.6B from the Hugging Face hub) -> figures -> report; train is not needed.
from shared.pipeline.paper import step_shell

from replications.equivalent_linear_mappings.pipeline import checkpoint, data_path, history

P = config["paper"]


rule train:
    input:
        code=P.code("train"),
        data=data_path(P.cfg),
    output:
        checkpoint=checkpoint(P),
        history=history(P),
    log:
        P.log("train"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=P.params({k: P.cfg.get(k) for k in ("model", "train", "device")}),
    shell:
        step_shell()
