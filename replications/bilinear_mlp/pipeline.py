"""bilinear_mlp: its workflow, declared as data (steps, analyses) and run by the shared rules.

Image part (image/, section 4): one batched training job per experiment, one analysis per metrics namespace.
Theory part (theory/, sections 2-3): the identities, checked on the image part's weights, and the toy Boolean task
(trained inside its own analysis job). Language part (language/, section 5, Apps H, I): a small transformer per MLP
kind, TopK SAEs on one layer's MLP input and output, and the analyses of its output features. Scripts are named as
modules of this package ("image.train"). See shared/pipeline/paper.py for what the workflow reads from here.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.grid import expand_runs
from shared.pipeline.paper import Analysis, Resources, Step

# Per step and per `resources=` key of the analyses; quick-tier jobs run single-threaded.
RESOURCES = {
    "train": Resources(gpu=True, threads=8, mem_mb=32000, runtime=240),
    "benchmark": Resources(gpu=True, threads=8, quick_threads=8, runtime=30),
    "train_lm": Resources(gpu=True, threads=8, mem_mb=32000, runtime=720),  # ts-tiny, ~2 B tokens
    # 4 M activations held in memory; the longest SAE sees ~150 M tokens
    "train_sae": Resources(gpu=True, threads=8, mem_mb=48000, runtime=240),
    # float64 eigendecompositions of 2,048 latents' 512 x 512 matrices
    "analyze_language": Resources(gpu=True, threads=8, mem_mb=48000, runtime=120),
    "benchmark_lm": Resources(gpu=True, threads=8, quick_threads=8, runtime=30),
}
BENCHMARKS = ("bilinear_mlp", "bilinear_mlp_lm")  # results/benchmarks/<stem>.json: steps benchmark, benchmark_lm

LM_MLPS = ("bilinear", "reglu", "swiglu")  # App I compares exactly these three
SAE_SITES = ("mlp_in", "mlp_out")

# metrics namespace -> (analysis script, experiment, inputs it reads, figures drawn from it); the theory part's
# identities read the image part's weights
IMAGE_ANALYSES = {
    "identities": ("theory.analyze_identities", "base", ("checkpoint", "data"), ()),  # or on base_fashion, see below
    "accuracy": ("image.analyze_accuracy", "base", ("history",), ("accuracy",)),
    "spectra": ("image.analyze_spectra", "base", ("checkpoint", "data"), ("eigenvectors", "spectrum")),
    "accuracy_fashion": ("image.analyze_accuracy", "base_fashion", ("history",), ("accuracy",)),
    "spectra_fashion": ("image.analyze_spectra", "base_fashion", ("checkpoint", "data"),
                        ("eigenvectors", "spectrum")),
    "noise": ("image.analyze_noise", "noise", ("checkpoint", "history", "data"), ("noise",)),
    "grid": ("image.analyze_grid", "grid", ("checkpoint",), ("grid",)),
    "truncation": ("image.analyze_truncation", "size", ("checkpoint", "data"), ("truncation",)),
    "similarity": ("image.analyze_similarity", "size", ("checkpoint",), ("similarity",)),
    "adversarial": ("image.analyze_adversarial", "adversarial", ("checkpoint", "data"), ("adversarial",)),
    "hosvd": ("image.analyze_hosvd", "base", ("checkpoint",), ("hosvd",)),
    "similarity_task": ("image.analyze_similarity_task", "similarity_task", ("checkpoint", "data"),  # section 4.3
                        ("target",)),
}


# training images per digit (the registry holds the totals): MNIST's published counts, Fashion-MNIST's 6,000 per
# class, MNIST-5k's 400
TRAIN_PER_CLASS = {"mnist": (5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949),
                   "fashion_mnist": (6000,) * 10, "mnist_5k": (400,) * 10}
TRUNCATION_READ = (5, 10)  # analyze_truncation's metrics read the accuracy at these k


def check(cfg):
    """Cross-key checks the schema cannot express (they run before any job): the image part, then the language part."""
    check_images(cfg)
    check_language(cfg)


def check_images(cfg):
    for dataset in cfg["datasets"]:  # the registry's image shape and classes
        if problem := shape_mismatch(dataset, {"d_input": cfg["d_input"], "n_classes": cfg["n_classes"]}):
            raise ConfigError(problem)
    adversarial = cfg["analysis"]["adversarial"]
    for j in adversarial["eigvecs"]:
        if j >= adversarial["keys_per_class"]:  # masks are built from the top keys_per_class eigenvectors
            raise ConfigError(f"'analysis.adversarial.eigvecs': {j} is not below keys_per_class = "
                              f"{adversarial['keys_per_class']} (allowed: 0 .. {adversarial['keys_per_class'] - 1})")
    for name, spec in cfg["experiments"].items():
        key = f"experiments.{name}"
        try:
            runs = expand_runs(spec, cfg["defaults"])
        except ValueError as error:  # two variants or grid points with one name
            raise ConfigError(f"'{key}': {error} (allowed: distinct variant names and grid values)") from None
        train = image_facts(spec["dataset"])["n_train"]
        if spec["batch_size"] > train:  # batches drop the last partial one: no batch at all would be trained
            raise ConfigError(f"'{key}.batch_size': {spec['batch_size']} exceeds the {train} training images of "
                              f"{spec['dataset']!r} (allowed: 1 .. {train})")
        if "task" in spec:
            task = spec["task"]
            count = TRAIN_PER_CLASS[spec["dataset"]][task["target_digit"]]
            if task["target_rank"] >= count:
                raise ConfigError(f"'{key}.task.target_rank': {task['target_rank']} is beyond the {count} training "
                                  f"images of digit {task['target_digit']} in {spec['dataset']!r} "
                                  f"(allowed: 0 .. {count - 1})")
        if name == "size":
            missing = [k for k in TRUNCATION_READ if k not in cfg["analysis"]["truncation_k"]]
            if missing:
                raise ConfigError(f"'analysis.truncation_k': {cfg['analysis']['truncation_k']} lacks "
                                  f"{', '.join(map(str, missing))} (allowed: any list that holds "
                                  f"{' and '.join(map(str, TRUNCATION_READ))}, which the truncation metrics read)")
        if name == "adversarial":
            narrowest = min(r["d_hidden"] for r in runs)
            if adversarial["keys_per_class"] > narrowest:
                raise ConfigError(f"'analysis.adversarial.keys_per_class': {adversarial['keys_per_class']} exceeds "
                                  f"the {narrowest} eigenvectors of experiment 'adversarial' (d_hidden; allowed: "
                                  f"1 .. {narrowest})")


def check_language(cfg):
    """Cross-key checks of the language part."""
    model, sae = cfg["language"]["model"], cfg["language"]["sae"]
    if sae["layer"] >= model["n_layer"]:
        raise ConfigError(f"'language.sae.layer': {sae['layer']} must be below model.n_layer = {model['n_layer']}")
    if model["d_model"] % model["n_head"] or (model["d_model"] // model["n_head"]) % 2:
        raise ConfigError(f"'language.model.n_head': d_model {model['d_model']} must split into "
                          f"{model['n_head']} heads of even size (rotary embeddings rotate channel pairs)")
    if sae["k"] > sae["expansion"] * model["d_model"]:
        raise ConfigError(f"'language.sae.k': {sae['k']} exceeds the SAE's "
                          f"{sae['expansion'] * model['d_model']} latents")
    if sae["train_tokens"] < model["n_ctx"]:
        raise ConfigError(f"'language.sae.train_tokens': {sae['train_tokens']} is less than one window "
                          f"(model.n_ctx = {model['n_ctx']})")


# ---------------------------------------------------------------- image part
def experiments(cfg):
    """The experiments of this tier whose dataset is part of the run."""
    return [e for e, spec in cfg["experiments"].items() if spec["dataset"] in cfg["datasets"]]


def run_names(cfg, experiment):
    """The names of the models in one experiment's checkpoint (e.g. "d_hidden=50,seed=0"), in training order."""
    return [spec["name"] for spec in expand_runs(cfg["experiments"][experiment], cfg["defaults"])]


def checkpoint_path(paper, experiment):
    """results/bilinear_mlp/<tier>/models/<experiment>.safetensors: every model of one experiment (read by
    bilinear_autoencoder too)."""
    return paper.out(f"models/{experiment}.safetensors")


def history_path(paper, experiment):
    return paper.out(f"models/{experiment}.json")


def image_data(cfg, experiment):
    return f"data/prepared/{cfg['experiments'][experiment]['dataset']}.safetensors"


def image_analyses(cfg):
    """IMAGE_ANALYSES, with the identities checked on the Fashion-MNIST models when MNIST is left out."""
    table = dict(IMAGE_ANALYSES)
    run = experiments(cfg)
    if "base" not in run and "base_fashion" in run:  # the identities hold for any trained weights
        table["identities"] = ("theory.analyze_identities", "base_fashion", ("checkpoint", "data"), ())
    return table


# ---------------------------------------------------------------- language part
def sae_sweep(cfg):
    """Step multipliers of the App H sweep: each SAE trains twice as long as the previous one."""
    return [2**i for i in range(cfg["language"]["sae"]["doublings"] + 1)]


def language_runs(cfg):
    """Whether this config runs the language part (`language.run`, absent: true). The Fashion-MNIST paper-scale part
    (paper_scale.yaml) sets it false: the full tier's TinyStories cannot be downloaded on every machine."""
    return cfg["language"].get("run", True)


def lm_data(cfg):
    return f"data/prepared/{cfg['language']['dataset']}.safetensors"


def lm_dir(paper):
    return paper.out("language")


def lm_checkpoint(paper, mlp="bilinear"):
    return f"{lm_dir(paper)}/lm_{mlp}.safetensors"


def lm_history(paper, mlp):
    return f"{lm_dir(paper)}/lm_{mlp}.json"


def sae_checkpoint(paper, site, multiplier):
    """One SAE; `site` and `multiplier` may be wildcards ("{site}")."""
    return f"{lm_dir(paper)}/sae_{site}_x{multiplier}.safetensors"


def language_params(cfg):
    """What every language step after training reads: the config's language section and the device."""
    return {**cfg["language"], "device": cfg["device"]}


def steps(paper):
    """The image part's training and benchmark, then the language part's (every training step is one job per
    experiment, MLP kind or SAE, and each reads only its own slice of the config)."""
    cfg = paper.cfg
    image = [
        # every run of one experiment in one batched call of shared.train.supervised.train
        Step("train", script="image.train", priority=1, wildcards={"experiment": "|".join(experiments(cfg))},
             inputs={"data": lambda w: image_data(cfg, w.experiment)},
             outputs={"checkpoint": checkpoint_path(paper, "{experiment}"),
                      "history": history_path(paper, "{experiment}")},
             params=lambda w: {"experiment": w.experiment, "spec": cfg["experiments"][w.experiment],
                               **{k: cfg[k] for k in ("defaults", "lr", "device", "d_input", "n_classes")}}),
        # training speed of the image model (never part of the default run; `snakemake benchmarks` collects it)
        Step("benchmark", script="image.benchmark", outputs={"out": "results/benchmarks/bilinear_mlp.json"},
             params={"device": cfg["device"]}),
    ]
    if not language_runs(cfg):
        return image
    return [
        *image,
        # one transformer per MLP kind (bilinear, ReGLU, SwiGLU), all from the same initial draw
        Step("train_lm", script="language.train_lm", priority=1, wildcards={"mlp": "|".join(LM_MLPS)},
             inputs={"data": lm_data(cfg)},
             outputs={"checkpoint": lm_checkpoint(paper, "{mlp}"), "history": lm_history(paper, "{mlp}")},
             params=lambda w: {"mlp": w.mlp, "model": cfg["language"]["model"], "train": cfg["language"]["train"],
                               "device": cfg["device"]}),
        # one TopK SAE per site (MLP input or output of the analysed layer) and step multiplier of the App H sweep
        Step("train_sae", script="language.train_sae", priority=1, log="train_sae_{site}_x{multiplier}",
             wildcards={"site": "|".join(SAE_SITES), "multiplier": "|".join(map(str, sae_sweep(cfg)))},
             inputs={"lm": lm_checkpoint(paper), "data": lm_data(cfg)},
             outputs={"checkpoint": sae_checkpoint(paper, "{site}", "{multiplier}")},
             params=lambda w: {"sae": cfg["language"]["sae"], "site": w.site, "multiplier": int(w.multiplier),
                               "device": cfg["device"]}),
        # transformer training speed with each MLP (never part of the default run; `snakemake benchmarks`)
        Step("benchmark_lm", script="language.benchmark_lm", inputs={"data": lm_data(cfg)},
             outputs={"out": "results/benchmarks/bilinear_mlp_lm.json"}, params=language_params(cfg)),
    ]


def analyses(paper):
    cfg = paper.cfg
    run = experiments(cfg)
    out = []
    for ns, (script, experiment, reads, figures) in image_analyses(cfg).items():
        if experiment not in run:
            continue
        paths = {"checkpoint": checkpoint_path(paper, experiment), "history": history_path(paper, experiment),
                 "data": image_data(cfg, experiment)}
        out.append(Analysis(ns, script=script, reads={k: paths[k] for k in reads}, params=cfg["analysis"],
                            figures=figures))
    # the toy Boolean task (tutorial 0, App L) needs no dataset: its script trains its four tiny models and
    # analyses them in one job of seconds
    out.append(Analysis("boolean", script="theory.toy_boolean", params=cfg["boolean"], figures=("gates",)))

    main = sae_sweep(cfg)[-1]  # the longest SAEs are the ones the circuit analyses read
    data = lm_data(cfg)
    circuit = {"lm": lm_checkpoint(paper), "sae_in": sae_checkpoint(paper, "mlp_in", main),
               "sae_out": sae_checkpoint(paper, "mlp_out", main), "data": data}
    off = "" if language_runs(cfg) else (f"the language part is not run in this config (language.run: false; its "
                                         f"dataset '{cfg['language']['dataset']}' is a download)")
    lm = dict(params=language_params(cfg), resources="analyze_language", not_run=off)
    out += [
        Analysis("lm_loss", script="language.analyze_lm_loss", figures=("lmloss",), **lm,
                 reads={"histories": [lm_history(paper, m) for m in LM_MLPS], "data": data}),
        Analysis("lowrank", script="language.analyze_lowrank", reads=circuit, figures=("lowrank",), **lm),
        Analysis("negation", script="language.analyze_negation", reads=circuit, figures=("negation",), **lm),
        Analysis("sae_length", script="language.analyze_sae_length", figures=("saelength",), **lm,
                 reads={"lm": lm_checkpoint(paper), "data": data,
                        "saes": [sae_checkpoint(paper, "mlp_out", m) for m in sae_sweep(cfg)]}),
    ]
    return out


def skipped(paper):
    cfg, run = paper.cfg, experiments(paper.cfg)
    reasons = {}
    for ns, (_, experiment, _, _) in image_analyses(cfg).items():
        if experiment in run:
            continue
        if experiment in cfg["experiments"]:
            reasons[ns] = (f"experiment '{experiment}' is not part of this run: its dataset "
                           f"'{cfg['experiments'][experiment]['dataset']}' is not in datasets {cfg['datasets']}")
        else:
            reasons[ns] = f"experiment '{experiment}' is not in the {paper.tier} tier"
    return reasons
