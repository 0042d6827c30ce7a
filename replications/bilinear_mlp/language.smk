# Bilinear MLPs, section 5 and Apps H, I: a small transformer with bilinear (and, for App I, ReGLU / SwiGLU) MLPs,
# TopK SAEs on one layer's MLP input and output, and the weight-based analyses of its output features.
# Stages: data -> train_lm (one job per MLP) -> train_sae (one job per SAE) -> analyze -> figures -> report.
# Included by rules.smk (which defines P); the analyses are declared in pipeline.py.
from replications.bilinear_mlp.pipeline import (
    LM_MLPS,
    SAE_SITES,
    language_params,
    lm_checkpoint,
    lm_data,
    lm_history,
    sae_checkpoint,
    sae_sweep,
)


# one transformer per MLP kind (bilinear, ReGLU, SwiGLU), all from the same initial draw
rule train_lm:
    input:
        code=P.code("language.train_lm"),
        data=lm_data(P.cfg),
    output:
        checkpoint=lm_checkpoint(P, "{mlp}"),
        history=lm_history(P, "{mlp}"),
    log:
        P.log("train_lm_{mlp}"),
    wildcard_constraints:
        mlp="|".join(LM_MLPS),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train_lm")
    resources:
        **P.resources("train_lm"),
    params:
        **P.step("language.train_lm"),
        p=lambda w: P.params(
            {
                "mlp": w.mlp,
                "model": P.cfg["language"]["model"],
                "train": P.cfg["language"]["train"],
                "device": P.cfg["device"],
            }
        ),
    shell:
        step_shell()


# one TopK SAE per site (MLP input or output of the analysed layer) and step multiplier of the App H sweep
rule train_sae:
    input:
        code=P.code("language.train_sae"),
        lm=lm_checkpoint(P),
        data=lm_data(P.cfg),
    output:
        checkpoint=sae_checkpoint(P, "{site}", "{multiplier}"),
    log:
        P.log("train_sae_{site}_x{multiplier}"),
    wildcard_constraints:
        site="|".join(SAE_SITES),
        multiplier="|".join(map(str, sae_sweep(P.cfg))),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train_sae")
    resources:
        **P.resources("train_sae"),
    params:
        **P.step("language.train_sae"),
        p=lambda w: P.params(
            {
                "sae": P.cfg["language"]["sae"],
                "site": w.site,
                "multiplier": int(w.multiplier),
                "device": P.cfg["device"],
            }
        ),
    shell:
        step_shell()


# transformer training speed with each MLP (never part of the default run; `snakemake benchmarks` collects it)
rule benchmark_lm:
    input:
        code=P.code("language.benchmark_lm"),
        data=lm_data(P.cfg),
    output:
        out="results/benchmarks/bilinear_mlp_lm.json",
    log:
        P.log("benchmark_lm"),
    threads: P.threads("benchmark_lm")
    resources:
        **P.resources("benchmark_lm"),
    params:
        **P.step("language.benchmark_lm"),
        p=P.params(language_params(P.cfg)),
    shell:
        step_shell()
