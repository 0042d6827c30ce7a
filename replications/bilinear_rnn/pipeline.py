"""bilinear_rnn: the Python side of its workflow. See shared/pipeline/paper.py.

One training job per experiment (every task x seed x learning rate of it, stacked where the shapes allow), one
evaluation job per experiment across test lengths, then three analyses: the accuracy table over all experiments,
the eigenvalues of one trained model's transitions, and Proposition 3 on frozen random transitions (no training).
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

# What model.py builds, restated so that parsing imports no torch: the baselines (no bilinear transitions) and the
# transformer's head count (model.TransformerTracker's default, which build() keeps).
BASELINES = ("lstm", "transformer", "mamba")
TRANSFORMER_HEADS = 4

# Per step and per `resources=` key of the analyses; quick-tier jobs run single-threaded.
RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=16000, runtime=720),
    "benchmark": Resources(gpu=True, runtime=30),  # one thread, as the quick tier trains
}
BENCHMARKS = ("bilinear_rnn",)  # results/benchmarks/bilinear_rnn.json: step benchmark


def check(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    experiments, test, analysis = cfg["experiments"], cfg["test"], cfg["analysis"]
    allowed = ", ".join(sorted(experiments))
    for name in cfg["hierarchy"]:
        if name not in experiments:
            raise ConfigError(f"'hierarchy': {name!r} is not an experiment (allowed: {allowed})")
    eigen = analysis["eigen_experiment"]
    if eigen not in experiments:
        raise ConfigError(f"'analysis.eigen_experiment': {eigen!r} is not an experiment (allowed: {allowed})")
    additions = [t for t in experiments[eigen]["tasks"] if t.startswith(("modadd", "parity"))]
    if analysis["eigen_task"] not in additions:
        raise ConfigError(f"'analysis.eigen_task': {analysis['eigen_task']!r} must be an addition task of "
                          f"experiment {eigen!r} (allowed: {', '.join(additions)})")
    if analysis["eigen_seed"] not in experiments[eigen]["seeds"]:
        raise ConfigError(f"'analysis.eigen_seed': {analysis['eigen_seed']} is not a seed of experiment {eigen!r} "
                          f"(allowed: {', '.join(map(str, experiments[eigen]['seeds']))})")
    if max(test["lengths"]) > test["length"]:
        raise ConfigError(f"'test.lengths': {max(test['lengths'])} exceeds test.length = {test['length']}")
    lo, hi = analysis["subspace_positions"]
    if not lo < hi <= test["length"]:
        raise ConfigError(f"'analysis.subspace_positions': need from < to <= test.length = {test['length']}")
    if experiments[eigen]["model"] in BASELINES:  # analyze_eigen reads the bilinear transitions (model.rnn)
        raise ConfigError(f"'analysis.eigen_experiment': {eigen!r} is a {experiments[eigen]['model']} baseline, which "
                          f"has no bilinear transitions (allowed: an experiment of a bilinear model)")
    schedule = cfg["schedule"]
    if schedule["min_length"] > schedule["max_length"]:  # training lengths are drawn uniform in [min, max]
        raise ConfigError(f"'schedule.min_length': {schedule['min_length']} exceeds schedule.max_length = "
                          f"{schedule['max_length']} (allowed: min_length <= max_length)")
    for name, spec in experiments.items():
        d_hidden, model = spec.get("d_hidden", cfg["d_hidden"]), spec["model"]
        where = f"experiments.{name}.d_hidden" if "d_hidden" in spec else "d_hidden"
        if model == "block" and d_hidden % spec["block"]:
            raise ConfigError(f"'experiments.{name}.block': {spec['block']} does not divide d_hidden = {d_hidden} "
                              f"(allowed: a divisor of d_hidden)")
        if model == "rotation" and d_hidden % 2:
            raise ConfigError(f"'{where}': {d_hidden} is odd, and experiment {name!r} rotates pairs of units "
                              f"(allowed: an even d_hidden)")
        if model == "transformer" and d_hidden % TRANSFORMER_HEADS:
            raise ConfigError(f"'{where}': {d_hidden} does not split into the transformer's {TRANSFORMER_HEADS} heads "
                              f"of experiment {name!r} (allowed: a multiple of {TRANSFORMER_HEADS})")


def experiments(cfg):
    return sorted(cfg["experiments"])


def tasks_path(paper):
    """Every task's automaton (in the metadata) and its fixed test sequences."""
    return paper.out("data/tasks.safetensors")


def checkpoint_path(paper, experiment):
    return paper.model_files(experiment)["checkpoint"]


def eval_path(paper, experiment):
    return paper.out(f"eval/{experiment}.json")


def steps(paper):
    cfg = paper.cfg
    experiment = {"experiment": "|".join(experiments(cfg))}
    return [
        Step("data", script="prepare_data", outputs={"out": tasks_path(paper)},
             params={"tasks": sorted({t for e in cfg["experiments"].values() for t in e["tasks"]}),
                     "fsm_seed": cfg["fsm_seed"], "test": cfg["test"]}),
        Step("train", script="train", priority=1, wildcards=experiment, inputs={"tasks": tasks_path(paper)},
             outputs=paper.model_files("{experiment}"),
             # only this experiment's slice of the config, so editing another experiment does not retrain this one
             params=lambda w: {"experiment": w.experiment,
                               **{k: cfg[k] for k in ("device", "d_hidden", "lrs", "schedule")},
                               "experiments": {w.experiment: cfg["experiments"][w.experiment]}}),
        Step("evaluate", script="evaluate", wildcards=experiment,
             inputs={"checkpoint": checkpoint_path(paper, "{experiment}"), "tasks": tasks_path(paper)},
             outputs={"out": eval_path(paper, "{experiment}")}, params={"lengths": cfg["test"]["lengths"]}),
        # stacked against one-by-one training of the same runs (never part of the default run; `snakemake benchmarks`)
        Step("benchmark", script="benchmark", outputs={"out": "results/benchmarks/bilinear_rnn.json"},
             params={"device": cfg["device"]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    a = cfg["analysis"]
    return [
        Analysis("accuracy", script="analyze_accuracy",
                 reads={"evals": [eval_path(paper, e) for e in experiments(cfg)],
                        "paper_table": f"{paper.dir}/paper_table.yaml"},
                 params={"analysis": a, "hierarchy": cfg["hierarchy"], "experiments": cfg["experiments"],
                         "lengths": cfg["test"]["lengths"]},
                 figures=("lengths", "hierarchy")),
        Analysis("eigen", script="analyze_eigen",
                 reads={"checkpoint": checkpoint_path(paper, a["eigen_experiment"]), "tasks": tasks_path(paper)},
                 params=a, figures=("eigenvalues",)),
        # Proposition 3 needs no trained model: frozen random transitions, only a readout fitted
        Analysis("frozen", script="frozen", reads={},
                 params={**a, "length": cfg["test"]["length"], "sequences": cfg["test"]["sequences"],
                         "seed": cfg["test"]["seed"]},
                 figures=("frozen",)),
    ]
