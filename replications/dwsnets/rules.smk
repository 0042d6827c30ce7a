# dwsnets: Equivariant Architectures for Learning in Deep Weight Spaces (Navon, Shamsian, Achituve, Fetaya,
# Chechik, Maron; ICML 2023).
# Stages: inrs (fit and cache the INR datasets) -> train (one job per task and model kind) -> analyze -> figures
# -> report. The analyze, figure and report rules are shared; the analyses are declared in pipeline.py.
from shared.pipeline.paper import step_shell

from replications.dwsnets.pipeline import IMAGE_TASKS, inr_params, inr_path, model_path, train_params

P = config["paper"]


wildcard_constraints:
    kind="dws|mlp_aug|mlp_align|mlp|stats",


rule sine_inrs:
    input:
        code=P.code("make_inrs"),
    output:
        out=inr_path(P, "sine"),
    log:
        P.log("inrs_sine"),
    priority: 2
    threads: P.threads("inrs")
    resources:
        **P.resources("inrs"),
    params:
        **P.step("make_inrs"),
        p=P.params(inr_params(P.cfg, "sine")),
    shell:
        step_shell()


rule image_inrs:
    input:
        code=P.code("make_inrs"),
        images="data/prepared/{task}.safetensors",
    output:
        out=inr_path(P, "{task}"),
    log:
        P.log("inrs_{task}"),
    wildcard_constraints:
        task="|".join(IMAGE_TASKS),
    priority: 2
    threads: P.threads("inrs")
    resources:
        **P.resources("inrs"),
    params:
        **P.step("make_inrs"),
        p=lambda w: P.params(inr_params(P.cfg, w.task)),
    shell:
        step_shell()


rule train:
    input:
        code=P.code("train"),
        data=inr_path(P, "{task}"),
    output:
        checkpoint=model_path(P, "{task}", "{kind}"),
        history=model_path(P, "{task}", "{kind}", "json"),
    log:
        P.log("train_{task}_{kind}"),
    wildcard_constraints:
        task="sine|" + "|".join(IMAGE_TASKS),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        p=lambda w: P.params(train_params(P.cfg, w.task, w.kind)),
    shell:
        step_shell()


# INR fitting, stacked against one by one (never part of the default run; `snakemake benchmarks`)
rule benchmark:
    input:
        code=P.code("benchmark"),
    output:
        out="results/benchmarks/dwsnets.json",
    log:
        P.log("benchmark"),
    threads: P.threads("benchmark")
    resources:
        **P.resources("benchmark"),
    params:
        **P.step("benchmark"),
        p=P.params(
            {
                "device": P.cfg["device"],
                "seed": P.cfg["seed"],
                "inr": P.cfg["inr"],
                "sine": P.cfg["sine"],
                **P.cfg["benchmark"],
            }
        ),
    shell:
        step_shell()
