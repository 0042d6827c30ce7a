"""linearizer: the Python side of its workflow. See shared/pipeline/paper.py.

One job per model (its own checkpoint), one analysis per model (a onestep model's sampling, inversion and SVD; a
projective model's idempotency) and one of the algebra's exactness on the model `analysis.algebra.model` names.
"""
from shared.data import REGISTRY
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

# Per step and per `resources=` key of the analyses; quick-tier jobs run single-threaded.
RESOURCES = {
    "train": Resources(gpu=True, threads=8, mem_mb=32000, runtime=1440),  # MNIST 47k steps; CelebA 200k at batch 16
    "onestep": Resources(gpu=True, threads=8, mem_mb=64000, runtime=240),  # CelebA: 12,288 x 12,288 step matrices
    "algebra": Resources(gpu=True, mem_mb=32000, runtime=60),
    "projective": Resources(gpu=True, mem_mb=32000, runtime=60),
}
ALGEBRA = "algebra"  # the algebra analysis's namespace: no model may take the name
# What prepare_data.py makes of each dataset when `size` is not given: (channels, side), and the held-out count
# (digits: its last 450 images; the registry's test splits; eight_gaussians: its `test` key).
NATIVE = {"digits": (1, 8), "mnist_5k": (1, 28), "mnist": (1, 28), "celeba_64": (3, 64)}
TEST_SIZE = {"digits": 450, "mnist_5k": 1000, "mnist": 10000, "celeba_64": 19867}


def data_dim(cfg, dataset):
    """n, the number of values of one example of `dataset` as prepare_data.py writes it."""
    if dataset == "eight_gaussians":
        return 2
    channels, side = NATIVE[dataset]
    side = cfg["datasets"][dataset].get("size") or side
    return channels * side * side


def test_size(cfg, dataset):
    return cfg["datasets"][dataset]["test"] if dataset == "eight_gaussians" else TEST_SIZE[dataset]


def models_of_kind(cfg, kind):
    return sorted(name for name, spec in cfg["models"].items() if spec["kind"] == kind)


def check(cfg):
    """Cross-key checks the schema cannot express; like it, they run before any job."""
    for name, spec in cfg["models"].items():
        if spec["dataset"] not in cfg["datasets"]:
            raise ConfigError(f"'models.{name}.dataset': {spec['dataset']!r} has no entry in 'datasets' "
                              f"(allowed: {', '.join(sorted(cfg['datasets']))})")
        if spec["kind"] == "onestep":
            for key in ("time_hidden", "time_embed"):
                if key not in spec["model"]:
                    raise ConfigError(f"'models.{name}.model.{key}' is required for a onestep model")
            if "sigma" not in spec["train"]:
                raise ConfigError(f"'models.{name}.train.sigma' is required for a onestep model")
        layout = cfg["datasets"][spec["dataset"]].get("layout")
        if layout == "image" and spec["model"]["flow"]["mixing"] != "linear":
            raise ConfigError(f"'models.{name}.model.flow.mixing': image flows mix channels with 'linear'")
        n = data_dim(cfg, spec["dataset"])
        if spec["kind"] == "projective" and spec["model"]["rank"] >= n:  # a rank-n projector is the identity
            raise ConfigError(f"'models.{name}.model.rank': {spec['model']['rank']} is not below the {n} values of "
                              f"a {spec['dataset']} example (allowed: 1 .. {n - 1})")
    for name, spec in cfg["datasets"].items():
        if name == "digits" and "size" in spec:  # prepare_data.py keeps scikit-learn's 8 x 8: a size would be ignored
            raise ConfigError(f"'datasets.digits.size': {spec['size']} is not used (digits stay 8 x 8; allowed: no size)")
        if spec.get("layout") == "image" and spec.get("size", 2) % 2:  # image flows squeeze 2 x 2 pixels into channels
            raise ConfigError(f"'datasets.{name}.size': {spec['size']} is odd, and an image layout's flow squeezes 2 x 2 "
                              f"pixels (allowed: an even size)")
    if ALGEBRA in cfg["models"]:
        raise ConfigError(f"'models.{ALGEBRA}': the name is taken by the algebra analysis's outputs")
    analysis = cfg["analysis"]
    for key, count, components in (("samples", analysis["samples"], analysis["components"]),
                                   ("projective.inputs", analysis["projective"]["inputs"],
                                    analysis["projective"]["components"])):
        if count <= components:  # a Frechet distance needs more samples than features
            raise ConfigError(f"'analysis.{key}': {count} must exceed the {components} principal components")
    onestep = models_of_kind(cfg, "onestep")
    if analysis["algebra"]["model"] not in onestep:
        raise ConfigError(f"'analysis.algebra.model': {analysis['algebra']['model']!r} is not a onestep model "
                          f"(allowed: {', '.join(onestep)})")
    algebra = analysis["algebra"]
    held_out = test_size(cfg, cfg["models"][algebra["model"]]["dataset"])
    if algebra["inputs"] > held_out:  # its noise batches and its held-out examples must pair up one to one
        raise ConfigError(f"'analysis.algebra.inputs': {algebra['inputs']} exceeds the {held_out} held-out examples of "
                          f"model {algebra['model']!r} (allowed: 2 .. {held_out})")


# ---------------------------------------------------------------- paths
def registry_source(dataset):
    """The prepared registry file a dataset is made from (shared `prepare_dataset` rule), or none: eight_gaussians
    is generated and digits ship with scikit-learn."""
    return [f"data/prepared/{dataset}.safetensors"] if dataset in REGISTRY else []


def data_path(paper, dataset):
    return paper.out(f"data/{dataset}.safetensors")


def model_data(paper, model):
    return data_path(paper, paper.cfg["models"][model]["dataset"])


def checkpoint(paper, model):
    return paper.out(f"models/{model}.safetensors")


def reads(paper, model):
    return {"checkpoint": checkpoint(paper, model), "data": model_data(paper, model)}


# ---------------------------------------------------------------- analyses
def onestep_figures(paper, model):
    return ("toy",) if paper.cfg["models"][model]["dataset"] == "eight_gaussians" else ("samples", "singular")


def steps(paper):
    cfg = paper.cfg
    return [
        # one dataset, prepared for this paper: a registry dataset is read from data/prepared/ (shared prepare_dataset)
        Step("data", script="prepare_data", wildcards={"dataset": "|".join(cfg["datasets"])},
             inputs={"source": lambda w: registry_source(w.dataset) or []},
             outputs={"out": data_path(paper, "{dataset}")},
             params=lambda w: {"dataset": w.dataset, "spec": cfg["datasets"][w.dataset]}),
        # one model (its config entry is its slice: editing another model retrains nothing)
        Step("train", script="train", priority=1, wildcards={"model": "|".join(cfg["models"])},
             inputs={"data": lambda w: model_data(paper, w.model)},
             outputs={"checkpoint": paper.out("models/{model}.safetensors"),
                      "history": paper.out("models/{model}.json")},
             params=lambda w: {**cfg["models"][w.model], "name": w.model, "device": cfg["device"]}),
    ]


def analyses(paper):
    """Per onestep model: one step vs many steps, sample quality, inversion, SVD; per projective model:
    idempotency; once: the algebra's exactness on `analysis.algebra.model`."""
    cfg, analysis, device = paper.cfg, paper.cfg["analysis"], paper.cfg["device"]
    onestep_params = {k: v for k, v in analysis.items() if k not in (ALGEBRA, "projective")}
    algebra_model = analysis["algebra"]["model"]
    return [
        Analysis(ALGEBRA, script="analyze_algebra", reads=reads(paper, algebra_model),
                 params={**analysis["algebra"], "steps": analysis["steps"], "device": device},
                 figures=("exactness",), resources="algebra"),
        *(Analysis(m, script="analyze_onestep", reads=reads(paper, m),
                   params={**onestep_params, "quality": cfg["datasets"][cfg["models"][m]["dataset"]]["quality"],
                           "device": device},
                   figures=onestep_figures(paper, m), resources="onestep")
          for m in models_of_kind(cfg, "onestep")),
        *(Analysis(m, script="analyze_projective", reads=reads(paper, m),
                   params={**analysis["projective"], "grid": 8, "device": device},
                   figures=("projective",), resources="projective")
          for m in models_of_kind(cfg, "projective")),
    ]


def skipped(paper):
    """A model of the tier that this run's config leaves out (a tiny test config drops some with `~`): the claims
    that read its namespace read NOT RUN, with the reason, instead of failing for a metrics file nobody was asked to
    write. Only models that config.yaml defines for the tier count, so a misspelled namespace in claims.yaml is
    still refused when the workflow parses."""
    from shared.io.files import read_yaml

    raw = read_yaml(paper.root / paper.dir / "config.yaml")
    defined = {*raw.get("common", {}).get("models", {}), *raw.get(paper.tier, {}).get("models", {})}
    wanted = {c["metric"].split(".", 1)[0] for c in paper.claims["claims"] if paper.tier in c["tiers"]}
    return {ns: f"model {ns!r} is not in this run's config (models: {', '.join(sorted(paper.cfg['models']))})"
            for ns in sorted((wanted & defined) - {a.ns for a in analyses(paper)})}
