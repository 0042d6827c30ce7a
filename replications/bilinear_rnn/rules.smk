# Revisiting Bi-Linear State Transitions in Recurrent Neural Networks (Ebrahimi & Memisevic, NeurIPS 2025).
# Stages: data (task automata + fixed test sets) -> train (one batched run per experiment) -> evaluate across
# lengths -> analyses (accuracy table, eigenvalues of the weights, Prop. 3) -> figures -> report
# (the figure and report rules are shared: shared/pipeline/rules/common.smk). Globals carry the BRNN prefix: every paper's
# rules.smk shares one namespace.
import json

from shared.pipeline.config import ConfigError, load_paper_config

BRNN = "replications/bilinear_rnn"
BRNN_CFG = load_paper_config(BRNN, TIER, config.get("bilinear_rnn"))
BRNN_RES = f"results/bilinear_rnn/{TIER}"
BRNN_REP = f"reports/bilinear_rnn/{TIER}"
BRNN_TASKS = f"{BRNN_RES}/data/tasks.safetensors"
BRNN_EXPERIMENTS = sorted(BRNN_CFG["experiments"])
BRNN_ANALYSIS = BRNN_CFG["analysis"]


def brnn_check_config(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    where = f"bilinear_rnn ({TIER} tier): invalid config key"
    experiments, test, analysis = cfg["experiments"], cfg["test"], cfg["analysis"]
    for name in cfg["hierarchy"]:
        if name not in experiments:
            raise ConfigError(f"{where} 'hierarchy': {name!r} is not an experiment (allowed: {', '.join(sorted(experiments))})")
    eigen = analysis["eigen_experiment"]
    if eigen not in experiments:
        raise ConfigError(f"{where} 'analysis.eigen_experiment': {eigen!r} is not an experiment "
                          f"(allowed: {', '.join(sorted(experiments))})")
    if analysis["eigen_task"] not in experiments[eigen]["tasks"] or not analysis["eigen_task"].startswith(("modadd", "parity")):
        raise ConfigError(f"{where} 'analysis.eigen_task': {analysis['eigen_task']!r} must be an addition task of "
                          f"experiment {eigen!r} (allowed: {', '.join(t for t in experiments[eigen]['tasks'] if t.startswith(('modadd', 'parity')))})")
    if analysis["eigen_seed"] not in experiments[eigen]["seeds"]:
        raise ConfigError(f"{where} 'analysis.eigen_seed': {analysis['eigen_seed']} is not a seed of experiment {eigen!r}")
    if max(test["lengths"]) > test["length"]:
        raise ConfigError(f"{where} 'test.lengths': {max(test['lengths'])} exceeds test.length = {test['length']}")
    lo, hi = analysis["subspace_positions"]
    if not lo < hi <= test["length"]:
        raise ConfigError(f"{where} 'analysis.subspace_positions': need from < to <= test.length = {test['length']}")


brnn_check_config(BRNN_CFG)

# metrics namespace -> figures drawn from its arrays (plot_<figure>.py)
BRNN_FIGURES = {"accuracy": ["lengths", "hierarchy"], "eigen": ["eigenvalues"], "frozen": ["frozen"]}
PAPER_CONFIGS["bilinear_rnn"] = BRNN_CFG
PAPER_METRICS["bilinear_rnn"] = [f"{BRNN_RES}/metrics/{ns}.json" for ns in BRNN_FIGURES]
PAPER_FIGURES["bilinear_rnn"] = [f"{BRNN_REP}/figures/{fig}_{ns}.png" for ns, figs in BRNN_FIGURES.items() for fig in figs]


rule bilinear_rnn:
    input:
        f"{BRNN_REP}/report.md",


rule bilinear_rnn_data:
    input:
        script=f"{BRNN}/prepare_data.py",
    output:
        BRNN_TASKS,
    params:
        p=json.dumps({"tasks": sorted({t for e in BRNN_CFG["experiments"].values() for t in e["tasks"]}),
                      "fsm_seed": BRNN_CFG["fsm_seed"], "test": BRNN_CFG["test"]}, sort_keys=True),
    log:
        f"{BRNN_RES}/logs/data.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --out {output:q} > {log:q} 2>&1"


rule bilinear_rnn_train:
    input:
        tasks=BRNN_TASKS,
        script=f"{BRNN}/train.py",
    output:
        checkpoint=f"{BRNN_RES}/models/{{experiment}}.safetensors",
        history=f"{BRNN_RES}/models/{{experiment}}.json",
    wildcard_constraints:
        experiment="|".join(BRNN_EXPERIMENTS),
    params:
        # only this experiment's slice of the config, so editing another experiment does not retrain this one
        p=lambda w: json.dumps({"experiment": w.experiment, "cfg": {
            **{k: BRNN_CFG[k] for k in ("device", "d_hidden", "lrs", "schedule")},
            "experiments": {w.experiment: BRNN_CFG["experiments"][w.experiment]}}}, sort_keys=True),
    threads: 1 if TIER == "quick" else workflow.cores  # small models: one thread each, two experiments at once
    resources:
        gpu=1 if TIER == "full" else 0,
    log:
        f"{BRNN_RES}/logs/train_{{experiment}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --tasks {input.tasks:q} "
        "--checkpoint {output.checkpoint:q} --history {output.history:q} 2> {log:q}"


rule bilinear_rnn_evaluate:
    input:
        checkpoint=f"{BRNN_RES}/models/{{experiment}}.safetensors",
        tasks=BRNN_TASKS,
        script=f"{BRNN}/evaluate.py",
    output:
        f"{BRNN_RES}/eval/{{experiment}}.json",
    wildcard_constraints:
        experiment="|".join(BRNN_EXPERIMENTS),
    params:
        p=json.dumps({"lengths": BRNN_CFG["test"]["lengths"]}),
    threads: 1
    log:
        f"{BRNN_RES}/logs/evaluate_{{experiment}}.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --checkpoint {input.checkpoint:q} "
        "--tasks {input.tasks:q} --out {output:q} > {log:q} 2>&1"


rule bilinear_rnn_accuracy:
    input:
        evals=[f"{BRNN_RES}/eval/{e}.json" for e in BRNN_EXPERIMENTS],
        paper_table=f"{BRNN}/paper_table.yaml",
        script=f"{BRNN}/analyze_accuracy.py",
    output:
        metrics=f"{BRNN_RES}/metrics/accuracy.json",
        arrays=f"{BRNN_RES}/analysis/accuracy.npz",
    params:
        p=json.dumps({"analysis": BRNN_ANALYSIS, "hierarchy": BRNN_CFG["hierarchy"],
                      "experiments": BRNN_CFG["experiments"], "lengths": BRNN_CFG["test"]["lengths"]}, sort_keys=True),
    log:
        f"{BRNN_RES}/logs/analyze_accuracy.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --evals {input.evals} --paper_table {input.paper_table:q} "
        "--metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule bilinear_rnn_eigen:
    input:
        checkpoint=f"{BRNN_RES}/models/{BRNN_CFG['analysis']['eigen_experiment']}.safetensors",
        tasks=BRNN_TASKS,
        script=f"{BRNN}/analyze_eigen.py",
    output:
        metrics=f"{BRNN_RES}/metrics/eigen.json",
        arrays=f"{BRNN_RES}/analysis/eigen.npz",
    params:
        p=json.dumps(BRNN_ANALYSIS, sort_keys=True),
    threads: 1
    log:
        f"{BRNN_RES}/logs/analyze_eigen.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} --checkpoint {input.checkpoint:q} "
        "--tasks {input.tasks:q} --metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule bilinear_rnn_frozen:
    input:
        script=f"{BRNN}/frozen.py",
    output:
        metrics=f"{BRNN_RES}/metrics/frozen.json",
        arrays=f"{BRNN_RES}/analysis/frozen.npz",
    params:
        p=json.dumps({**BRNN_ANALYSIS, "length": BRNN_CFG["test"]["length"], "sequences": BRNN_CFG["test"]["sequences"],
                      "seed": BRNN_CFG["test"]["seed"]}, sort_keys=True),
    threads: 1
    log:
        f"{BRNN_RES}/logs/frozen.log",
    shell:
        "{PY:q} {input.script:q} --params {params.p:q} --threads {threads} "
        "--metrics {output.metrics:q} --arrays {output.arrays:q} > {log:q} 2>&1"


rule bilinear_rnn_benchmark:
    input:
        f"{BRNN}/benchmark.py",
    output:
        "results/benchmarks/bilinear_rnn.json",
    threads: 1
    shell:
        "{PY:q} {input:q} --out {output:q} --device {BRNN_CFG[device]}"


BENCHMARKS.append("results/benchmarks/bilinear_rnn.json")
