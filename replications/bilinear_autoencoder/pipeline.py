"""bilinear_autoencoder: its workflow, declared as data (steps, analyses) and run by the shared rules. See
shared/pipeline/paper.py.

One activations file per dataset of the tier (planted manifolds; the flagship bilinear_mlp's trained MNIST
classifier, read from its checkpoint; a language model's residual stream at the full tier), one training job per
dataset (every kind x sparsity penalty, plus TopK SAEs), and three analyses per dataset.
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.grid import expand_runs
from shared.pipeline.paper import Analysis, Resources, Step

NEEDS = ("bilinear_mlp",)  # the mnist_bilinear activations come from its trained classifier

# Per step (and the shared `analyze`): what one job needs. Quick-tier jobs run single-threaded.
RESOURCES = {
    "data": Resources(gpu=True, mem_mb=32000, runtime=120),  # Qwen3-0.6B forward passes over 2.2 M FineWeb-Edu tokens
    # 44 autoencoders x 1,024 steps with 16,384 latents (a 16,384^2 kernel each step)
    "train": Resources(gpu=True, threads=8, mem_mb=64000, runtime=1440),
}

ORDERED, MIXING = ("ordered", "combined"), ("mixed", "combined")
FLAGSHIP_TEST_SIZE = {"mnist": 10000, "fashion_mnist": 10000, "mnist_5k": 1000}  # the registry's test splits


def run_name(kind, alpha):
    return f"{kind}_a{round(100 * alpha)}"


def runs(cfg):
    """The bilinear autoencoders every dataset trains: each kind at each sparsity penalty."""
    return [{"name": run_name(k, a), "kind": k, "alpha": a, "seed": cfg["seed"]}
            for k in cfg["kinds"] for a in sorted(cfg["alphas"])]


def check(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    names = {r["name"] for r in runs(cfg)}
    analysis = cfg["analysis"]
    for key, name in (("prefix.ordered", analysis["prefix"]["ordered"]), ("prefix.vanilla", analysis["prefix"]["vanilla"]),
                      ("manifold.model", analysis["manifold"]["model"])):
        if name not in names:
            raise ConfigError(f"'analysis.{key}': {name!r} is not a trained run (kinds x alphas: {', '.join(sorted(names))})")
    if not analysis["prefix"]["ordered"].startswith(ORDERED):
        raise ConfigError(f"'analysis.prefix.ordered': {analysis['prefix']['ordered']!r} is not an ordered kind")
    if not analysis["manifold"]["model"].startswith(MIXING):
        raise ConfigError(f"'analysis.manifold.model': {analysis['manifold']['model']!r} has no mixing matrix")
    if analysis["prefix"]["chunks"] % 16:  # the prefix metrics read k = n/16, n/8, n/4 at chunk boundaries
        raise ConfigError(f"'analysis.prefix.chunks': {analysis['prefix']['chunks']} must be a multiple of 16")
    if analysis["compare_kind"] not in cfg["kinds"]:
        raise ConfigError(f"'analysis.compare_kind': {analysis['compare_kind']!r} is not in 'kinds'")
    for name, spec in cfg["datasets"].items():
        if spec["source"] == "planted":
            counts = spec["counts"]
            used = 3 * (counts["circle"] + counts["triangle"] + counts["cluster"]) + counts["direction"]
            if spec["test"] < analysis["batch_size"]:
                raise ConfigError(f"'datasets.{name}.test': {spec['test']} is fewer than one held-out batch "
                                  f"(analysis.batch_size = {analysis['batch_size']})")
            if used > spec["d"]:
                raise ConfigError(f"'datasets.{name}.d': {spec['d']} is fewer than the {used} dimensions the "
                                  f"components need")
            check_dictionary_sizes(cfg, name, spec["d"])
        elif spec["source"] == "language_model" and spec["test_tokens"] < analysis["batch_size"]:
            raise ConfigError(f"'datasets.{name}.test_tokens': {spec['test_tokens']} is fewer than one held-out batch "
                              f"(analysis.batch_size = {analysis['batch_size']})")
    alphas = sorted(cfg["alphas"])  # run names round alpha to hundredths: two alphas must not share a name
    for a, b in zip(alphas, alphas[1:]):
        if run_name("vanilla", a) == run_name("vanilla", b):
            raise ConfigError(f"'alphas': {a} and {b} give the same run name {run_name('vanilla', a)!r} "
                              f"(allowed: alphas that differ in their hundredths)")


def check_dictionary_sizes(cfg, name, d, where=None):
    """What the training and analyses of dataset `name` (d-dimensional activations) index into its dictionaries:
    TopK k among topk.expansion x d latents, the prefix chunks and the Gram neighbours among expansion x d."""
    where = where or f"datasets.{name}"
    topk, analysis = cfg["topk"], cfg["analysis"]
    n_topk = topk["expansion"] * d
    for k in topk["ks"]:
        if k > n_topk:
            raise ConfigError(f"'topk.ks': {k} exceeds the {n_topk} latents of dataset {name!r}'s TopK SAE "
                              f"(topk.expansion {topk['expansion']} x d = {d} at {where}; allowed: k <= {n_topk})")
    expansion = cfg["datasets"][name].get("expansion", cfg["expansion"])
    n = expansion * d
    if analysis["prefix"]["chunks"] > n:
        raise ConfigError(f"'analysis.prefix.chunks': {analysis['prefix']['chunks']} exceeds the {n} latents of "
                          f"dataset {name!r} (expansion {expansion} x d = {d} at {where}; allowed: chunks <= {n})")
    for key in ("neighbours", "purity_top"):
        if analysis["manifold"][key] >= n:  # other latents ranked by |G|: at most n - 1 of them
            raise ConfigError(f"'analysis.manifold.{key}': {analysis['manifold'][key]} is not below the {n} latents "
                              f"of dataset {name!r} (expansion {expansion} x d = {d} at {where}; allowed: < {n})")


# ---------------------------------------------------------------- paths
def data_path(paper, dataset="{dataset}"):
    return paper.out(f"data/{dataset}.safetensors")


def checkpoint_path(paper, dataset="{dataset}"):
    return paper.out(f"models/{dataset}.safetensors")


def history_path(paper, dataset="{dataset}"):
    return paper.out(f"models/{dataset}.json")


def data_script(cfg, dataset):
    return "lm_activations" if cfg["datasets"][dataset]["source"] == "language_model" else "prepare_data"


# ---------------------------------------------------------------- the flagship's checkpoint (bilinear_mlp)
# What this paper reads of bilinear_mlp, computed from its loaded config (paper.needed["bilinear_mlp"]). These
# mirror bilinear_mlp's own path and run-name helpers; kept here so that this paper does not import another's code.
def flagship(paper):
    if "bilinear_mlp" not in paper.needed:
        raise ConfigError("'datasets': a bilinear_mlp source needs the bilinear_mlp paper loaded (NEEDS)")
    return paper.needed["bilinear_mlp"]


def flagship_inputs(paper, dataset):
    """{"checkpoint", "images"} of a `source: bilinear_mlp` dataset: the flagship experiment's checkpoint (its rule
    trains it if missing) and the images it was trained on. Raises ConfigError naming the key when the experiment
    or the run is not one the flagship trains at this tier."""
    spec, key = paper.cfg["datasets"][dataset], f"datasets.{dataset}"
    other = flagship(paper)
    experiments = other.cfg["experiments"]
    if spec["experiment"] not in experiments:
        raise ConfigError(f"'{key}.experiment': {spec['experiment']!r} is not an experiment of bilinear_mlp's "
                          f"{other.tier} tier (experiments: {', '.join(sorted(experiments))})")
    experiment = experiments[spec["experiment"]]
    if experiment["dataset"] not in other.cfg["datasets"]:
        raise ConfigError(f"'{key}.experiment': bilinear_mlp's experiment {spec['experiment']!r} is not part of its "
                          f"run: its dataset {experiment['dataset']!r} is not in its datasets {other.cfg['datasets']}")
    names = [r["name"] for r in expand_runs(experiment, other.cfg["defaults"])]
    if spec["run"] not in names:
        raise ConfigError(f"'{key}.run': {spec['run']!r} is not a run of bilinear_mlp's experiment "
                          f"{spec['experiment']!r} (runs: {', '.join(names)})")
    run = next(r for r in expand_runs(experiment, other.cfg["defaults"]) if r["name"] == spec["run"])
    check_dictionary_sizes(paper.cfg, dataset, run["d_hidden"], where=f"{key}.run")
    held_out = FLAGSHIP_TEST_SIZE.get(experiment["dataset"])
    if held_out is not None and held_out < paper.cfg["analysis"]["batch_size"]:
        raise ConfigError(f"'analysis.batch_size': {paper.cfg['analysis']['batch_size']} exceeds the {held_out} "
                          f"held-out images of {key} (bilinear_mlp's {experiment['dataset']!r})")
    return {"checkpoint": other.out(f"models/{spec['experiment']}.safetensors"),
            "images": f"data/prepared/{experiment['dataset']}.safetensors"}


def data_inputs(paper, dataset):
    """What the activations of one dataset are read from (nothing for planted or language-model data)."""
    if paper.cfg["datasets"][dataset]["source"] == "bilinear_mlp":
        return flagship_inputs(paper, dataset)
    return {}


# ---------------------------------------------------------------- steps
def steps(paper):
    cfg = paper.cfg
    datasets = {"dataset": "|".join(cfg["datasets"])}

    def source_input(key):  # a flagship source's checkpoint or images; no input (an empty list) for other sources
        return lambda w: data_inputs(paper, w.dataset).get(key, [])

    return [
        # The activations one dataset's autoencoders decompose (a flagship source reads bilinear_mlp's checkpoint: its
        # own step trains it if missing); the script depends on the source.
        Step("data", script=lambda w: data_script(cfg, w.dataset), wildcards=datasets,
             inputs={"checkpoint": source_input("checkpoint"), "images": source_input("images")},
             outputs={"out": data_path(paper)},
             params=lambda w: {"name": w.dataset, "spec": cfg["datasets"][w.dataset], "device": cfg["device"]}),
        # Every autoencoder of one dataset in one job: the bilinear ones (kinds x alphas) and the TopK SAEs.
        Step("train", script="train", priority=1, wildcards=datasets, inputs={"data": data_path(paper)},
             outputs={"checkpoint": checkpoint_path(paper), "history": history_path(paper)},
             params=lambda w: {"dataset": w.dataset, "runs": runs(cfg), "device": cfg["device"],
                               "expansion": cfg["datasets"][w.dataset].get("expansion", cfg["expansion"]),
                               **{k: cfg[k] for k in ("bottleneck", "train", "topk")}}),
    ]


# ---------------------------------------------------------------- analyses
def analyses(paper):
    """Per dataset: the Pareto curves (pareto_<dataset>), the prefix ordering (prefix_<dataset>) and the manifolds
    read from the weights (manifold_<dataset>)."""
    cfg = paper.cfg
    analysis = cfg["analysis"]
    out = []
    for name, spec in cfg["datasets"].items():
        data_inputs(paper, name)  # checks a flagship source's experiment and run while parsing
        reads = {"checkpoint": checkpoint_path(paper, name), "data": data_path(paper, name)}
        out += [
            Analysis(f"pareto_{name}", script="analyze_pareto", reads=reads, figures=("pareto",),
                     params={k: v for k, v in analysis.items() if k not in ("prefix", "manifold")}),
            Analysis(f"prefix_{name}", script="analyze_prefix", reads=reads, params=analysis["prefix"],
                     figures=("prefix",)),
            Analysis(f"manifold_{name}", script="analyze_manifold", reads=reads, params=analysis["manifold"],
                     figures=("manifold", "gram") if spec["source"] == "planted" else ("gram",)),
        ]
    return out
