"""git_re_basin: the Python side of its workflow. See shared/pipeline/paper.py.

One training job per (kind, width): two models (seeds), plus snapshots over training at one width. Analyses:
barriers (naive, activation and weight matching at every width), ste (Algorithm 2 at one width), training (weight
matching at each snapshot), identities (permuted function, planted permutation), counterexample (App. A.6; no
training) and, when enabled, extension (ours: a bilinear MLP).
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=8000, runtime=120),
    "analyze": Resources(gpu=False, threads=4, mem_mb=16000, runtime=60),
    "ste": Resources(gpu=False, threads=4, mem_mb=16000, runtime=600),  # full: 15k steps, each a weight matching
}


def check(cfg):
    """Cross-key checks: the data's shape, and every width an analysis reads is trained."""
    if problem := shape_mismatch(cfg["dataset"], {key: cfg[key] for key in ("d_input", "n_classes")}):
        raise ConfigError(problem)
    train = image_facts(cfg["dataset"])["n_train"]
    a = cfg["analysis"]
    for key, width in (("snapshots.width", cfg["snapshots"]["width"]), ("analysis.ste.width", a["ste"]["width"]),
                       ("analysis.identity.width", a["identity"]["width"])):
        if width not in cfg["widths"]:
            raise ConfigError(f"'{key}': {width} is not a trained width (allowed: {cfg['widths']})")
    late = [e for e in cfg["snapshots"]["epochs"] if e >= cfg["optim"]["epochs"]]
    if late:
        raise ConfigError(f"'snapshots.epochs': {late} not before the last epoch (allowed: 0 .. "
                          f"{cfg['optim']['epochs'] - 1}; the final model is always included)")
    for key, size in (("optim.batch_size", cfg["optim"]["batch_size"]), ("analysis.ste.batch_size", a["ste"]["batch_size"]),
                      ("analysis.am_samples", a["am_samples"])):
        if size > train:
            raise ConfigError(f"'{key}': {size} exceeds the {train} training images of {cfg['dataset']!r} "
                              f"(allowed: 1 .. {train})")


def data_path(paper):
    return f"data/prepared/{paper.cfg['dataset']}.safetensors"


def checkpoint_path(paper, kind, width):
    return paper.out(f"models/{kind}_h{width}.safetensors")


def runs(cfg):
    """(kind, width) of every training job."""
    out = [("relu", w) for w in cfg["widths"]]
    if cfg["extension"]["bilinear"]:
        out.append(("bilinear", cfg["extension"]["width"]))
    return out


def steps(paper):
    cfg = paper.cfg

    def params(w):  # this job's slice of the config: editing another width's settings does not retrain it
        snapshots = w.kind == "relu" and int(w.width) == cfg["snapshots"]["width"]
        return {"kind": w.kind, "width": int(w.width),
                "snapshot_epochs": cfg["snapshots"]["epochs"] if snapshots else [],
                **{k: cfg[k] for k in ("device", "d_input", "n_classes", "n_hidden", "seeds", "optim")}}

    return [
        Step("train", script="train", priority=1, wildcards={"kind": "relu|bilinear", "width": r"\d+"},
             inputs={"data": data_path(paper)}, log="train_{kind}_h{width}", params=params,
             outputs={"checkpoint": checkpoint_path(paper, "{kind}", "{width}"),
                      "history": paper.out("models/{kind}_h{width}.json")}),
    ]


def analyses(paper):
    cfg, data = paper.cfg, data_path(paper)
    a = cfg["analysis"]
    base = {k: a[k] for k in ("lambdas", "am_samples", "wm_max_sweeps", "match_seed")}
    ckpt = lambda w, kind="relu": checkpoint_path(paper, kind, w)
    out = [
        Analysis("barriers", script="analyze_barriers",
                 reads={"checkpoints": [ckpt(w) for w in cfg["widths"]], "data": data},
                 params={**base, "widths": cfg["widths"]}, figures=("barrier_curves", "barrier_width")),
        Analysis("ste", script="analyze_ste", reads={"checkpoint": ckpt(a["ste"]["width"]), "data": data},
                 params={**base, **a["ste"]}, figures=("ste",), resources="ste"),
        Analysis("training", script="analyze_training",
                 reads={"checkpoint": ckpt(cfg["snapshots"]["width"]), "data": data},
                 params={**base, "width": cfg["snapshots"]["width"]}, figures=("training",)),
        Analysis("identities", script="analyze_identities",
                 reads={"checkpoints": [ckpt(w) for w in cfg["widths"]], "data": data},
                 params={**base, **a["identity"]}),
        Analysis("counterexample", script="analyze_counterexample",
                 params={"lambdas": a["lambdas"], **a["counterexample"]}, figures=("counterexample",)),
    ]
    if cfg["extension"]["bilinear"]:
        w = cfg["extension"]["width"]
        out.append(Analysis("extension", script="analyze_extension",
                            reads={"checkpoint": ckpt(w, "bilinear"), "data": data}, params={**base, "width": w}))
    return out
