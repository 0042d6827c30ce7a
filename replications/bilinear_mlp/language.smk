# Bilinear MLPs, section 5 and Apps H, I: a small transformer with bilinear (and, for App I, ReGLU / SwiGLU) MLPs,
# TopK SAEs on one layer's MLP input and output, and the weight-based analyses of its output features.
# Stages: data -> train_lm (one job per MLP) -> train_sae (one job per SAE) -> analyze -> figures -> report.
# Included by rules.smk, which defines BMLP, BMLP_CFG, BMLP_RES, BMLP_REP.
from shared.pipeline.config import ConfigError

BMLP_LM = BMLP_CFG["language"]
BMLP_LM_MLPS = ("bilinear", "reglu", "swiglu")  # App I compares exactly these three
BMLP_SAE_SWEEP = [2**i for i in range(BMLP_LM["sae"]["doublings"] + 1)]  # step multipliers of the App H sweep
BMLP_SAE_MAIN = BMLP_SAE_SWEEP[-1]  # the longest SAEs are the ones the circuit analyses read


def bmlp_check_language(lm):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    where = f"bilinear_mlp ({TIER} tier): invalid config key"
    model, sae = lm["model"], lm["sae"]
    if sae["layer"] >= model["n_layer"]:
        raise ConfigError(f"{where} 'language.sae.layer': {sae['layer']} must be below model.n_layer = {model['n_layer']}")
    if model["d_model"] % model["n_head"] or (model["d_model"] // model["n_head"]) % 2:
        raise ConfigError(f"{where} 'language.model.n_head': d_model {model['d_model']} must split into "
                          f"{model['n_head']} heads of even size (rotary embeddings rotate channel pairs)")
    if sae["k"] > sae["expansion"] * model["d_model"]:
        raise ConfigError(f"{where} 'language.sae.k': {sae['k']} exceeds the SAE's "
                          f"{sae['expansion'] * model['d_model']} latents")
    if sae["train_tokens"] < model["n_ctx"]:
        raise ConfigError(f"{where} 'language.sae.train_tokens': {sae['train_tokens']} is less than one window "
                          f"(model.n_ctx = {model['n_ctx']})")


bmlp_check_language(BMLP_LM)

BMLP_LM_DATA = f"data/prepared/{BMLP_LM['dataset']}.safetensors"
BMLP_LM_HELPERS = [f"{BMLP}/language.py", f"{BMLP}/language_features.py"]  # edits to them re-run what uses them
BMLP_LM_DIR = f"{BMLP_RES}/language"
BMLP_LM_CKPT = f"{BMLP_LM_DIR}/lm_bilinear.safetensors"
BMLP_SAE = BMLP_LM_DIR + "/sae_{site}_x{multiplier}.safetensors"
BMLP_SAE_IN = BMLP_SAE.format(site="mlp_in", multiplier=BMLP_SAE_MAIN)
BMLP_SAE_OUT = BMLP_SAE.format(site="mlp_out", multiplier=BMLP_SAE_MAIN)

# metrics namespace -> (analysis script, inputs, figures drawn from its arrays)
BMLP_LM_ANALYSES = {
    "lm_loss": ("lm_loss", {"histories": [f"{BMLP_LM_DIR}/lm_{m}.json" for m in BMLP_LM_MLPS], "data": BMLP_LM_DATA},
                ["lmloss"]),
    "lowrank": ("lowrank", {"lm": BMLP_LM_CKPT, "sae_in": BMLP_SAE_IN, "sae_out": BMLP_SAE_OUT, "data": BMLP_LM_DATA},
                ["lowrank"]),
    "negation": ("negation", {"lm": BMLP_LM_CKPT, "sae_in": BMLP_SAE_IN, "sae_out": BMLP_SAE_OUT,
                              "data": BMLP_LM_DATA}, ["negation"]),
    "sae_length": ("sae_length", {"lm": BMLP_LM_CKPT, "data": BMLP_LM_DATA,
                                  "saes": [BMLP_SAE.format(site="mlp_out", multiplier=m) for m in BMLP_SAE_SWEEP]},
                   ["saelength"]),
}
PAPER_METRICS["bilinear_mlp"] += [f"{BMLP_RES}/metrics/{ns}.json" for ns in BMLP_LM_ANALYSES]
PAPER_FIGURES["bilinear_mlp"] += [f"{BMLP_REP}/figures/{fig}_{ns}.png" for ns, a in BMLP_LM_ANALYSES.items() for fig in a[2]]


rule bilinear_mlp_train_lm:
    input:
        data=BMLP_LM_DATA,
        script=f"{BMLP}/train_lm.py",
        helpers=BMLP_LM_HELPERS,
    output:
        checkpoint=f"{BMLP_LM_DIR}/lm_{{mlp}}.safetensors",
        history=f"{BMLP_LM_DIR}/lm_{{mlp}}.json",
    wildcard_constraints:
        mlp="|".join(BMLP_LM_MLPS),
    params:
        p=lambda w: json.dumps({"mlp": w.mlp, "model": BMLP_LM["model"], "train": BMLP_LM["train"],
                                "device": BMLP_CFG["device"]}, sort_keys=True),
    threads: 1 if TIER == "quick" else workflow.cores  # small models: one thread each, jobs side by side
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{BMLP_RES}/logs/train_lm_{{mlp}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --data {input.data:q} "
        "--checkpoint {output.checkpoint:q} --history {output.history:q} 2> {log:q}"


rule bilinear_mlp_train_sae:
    input:
        lm=BMLP_LM_CKPT,
        data=BMLP_LM_DATA,
        script=f"{BMLP}/train_sae.py",
        helpers=BMLP_LM_HELPERS,
    output:
        BMLP_SAE,
    wildcard_constraints:
        site="mlp_in|mlp_out",
        multiplier="|".join(map(str, BMLP_SAE_SWEEP)),
    params:
        p=lambda w: json.dumps({"sae": BMLP_LM["sae"], "site": w.site, "multiplier": int(w.multiplier),
                                "device": BMLP_CFG["device"]}, sort_keys=True),
    threads: 1 if TIER == "quick" else workflow.cores
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{BMLP_RES}/logs/train_sae_{{site}}_x{{multiplier}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --lm {input.lm:q} --data {input.data:q} "
        "--checkpoint {output:q} 2> {log:q}"


rule bilinear_mlp_analyze_language:
    input:
        unpack(lambda w: {"script": f"{BMLP}/analyze_{BMLP_LM_ANALYSES[w.ns][0]}.py", "helpers": BMLP_LM_HELPERS,
                          **BMLP_LM_ANALYSES[w.ns][1]}),
    output:
        metrics=f"{BMLP_RES}/metrics/{{ns}}.json",
        arrays=f"{BMLP_RES}/analysis/{{ns}}.npz",
    wildcard_constraints:
        ns="|".join(BMLP_LM_ANALYSES),
    params:
        p=json.dumps({**BMLP_LM, "device": BMLP_CFG["device"]}, sort_keys=True),
        paths=lambda w, input: path_args(dict(input.items()), skip=("script", "helpers")),
    threads: workflow.cores if TIER == "full" else 1
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{BMLP_RES}/logs/analyze_{{ns}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} {params.paths} "
        "--metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule bilinear_mlp_benchmark_lm:
    input:
        script=f"{BMLP}/benchmark_lm.py",
        data=BMLP_LM_DATA,
    output:
        "results/benchmarks/bilinear_mlp_lm.json",
    params:
        p=json.dumps({**BMLP_LM, "device": BMLP_CFG["device"]}, sort_keys=True),
    threads: workflow.cores
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --data {input.data:q} --out {output:q}"


BENCHMARKS.append("results/benchmarks/bilinear_mlp_lm.json")
