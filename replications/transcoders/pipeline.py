"""transcoders: the Python side of its workflow. See shared/pipeline/paper.py.

Three training steps, three analyses: `teacher` (transcoders and SAEs fitted to a planted two-MLP feature-circuit
teacher, data made in the step) read by `teacher`; `lm` (the stand-in language model on the registry's synthetic
stories) and `dicts` (transcoders and SAEs of two of its MLPs over an L1 grid) read by `frontier` (sparsity against
CE loss recovered, dead features) and `circuits` (attribution read from the weights against activation patching,
and the exact decomposition identity in float64).
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train_teacher": Resources(gpu=True, threads=1, mem_mb=8000, runtime=60),
    "train_lm": Resources(gpu=True, threads=4, mem_mb=8000, runtime=120),
    "train_dicts": Resources(gpu=True, threads=4, mem_mb=32000, runtime=120),
    "analyze": Resources(gpu=True, threads=2, mem_mb=16000, runtime=60),
}


def check(cfg):
    """Cross-key checks: the teacher's parents fit its features; the analysed layers are two successive ones of
    the model; the circuit's l1 index is in the grid; heads split d_model; enough features to pick from."""
    t, m, dicts, a = cfg["teacher"], cfg["lm"]["model"], cfg["dicts"], cfg["analysis"]
    low, high = t["parents"]
    if not low <= high <= t["features"]:
        raise ConfigError(f"'teacher.parents': {t['parents']} must satisfy low <= high <= features = {t['features']}")
    src, tgt = dicts["layers"]
    if not (0 <= src and tgt == src + 1 and tgt < m["n_layer"]):
        raise ConfigError(f"'dicts.layers': {dicts['layers']} must be two successive layers l, l + 1 of the model's "
                          f"{m['n_layer']} (allowed: [l, l + 1] with l + 1 < n_layer)")
    if a["circuit_l1_index"] >= len(dicts["l1"]):
        raise ConfigError(f"'analysis.circuit_l1_index': {a['circuit_l1_index']} is outside the l1 grid of "
                          f"{len(dicts['l1'])} values")
    if m["d_model"] % m["n_head"] or (m["d_model"] // m["n_head"]) % 2:
        raise ConfigError(f"'lm.model.n_head': {m['n_head']} must split d_model = {m['d_model']} into heads of even size")
    n_features = dicts["expansion"] * m["d_model"]
    for key in ("sources", "targets"):
        if a[key] > n_features:
            raise ConfigError(f"'analysis.{key}': {a[key]} exceeds the {n_features} features of a transcoder")


def data_path(cfg):
    return f"data/prepared/{cfg['lm']['dataset']}.safetensors"


def steps(paper):
    cfg = paper.cfg
    return [
        Step("train_teacher", script="train_teacher", priority=1, outputs=paper.model_files("teacher"),
             params={"device": cfg["device"], "teacher": cfg["teacher"]}),
        Step("train_lm", script="train_lm", priority=2, inputs={"data": data_path(cfg)},
             outputs=paper.model_files("lm"), params={"device": cfg["device"], "lm": cfg["lm"]}),
        Step("train_dicts", script="train_dicts", priority=1,
             inputs={"data": data_path(cfg), "lm": paper.model_files("lm")["checkpoint"]},
             outputs=paper.model_files("dicts"), params={"device": cfg["device"], "dicts": cfg["dicts"]}),
    ]


def analyses(paper):
    cfg = paper.cfg
    lm = {"data": data_path(cfg), "lm": paper.model_files("lm")["checkpoint"],
          "dicts": paper.model_files("dicts")["checkpoint"]}
    return [
        Analysis("teacher", script="analyze_teacher", reads=paper.model_files("teacher"),
                 params={"teacher": cfg["teacher"]}, figures=("teacher",)),
        Analysis("frontier", script="analyze_frontier", reads=lm,
                 params={"dicts": cfg["dicts"], "analysis": cfg["analysis"]}, figures=("frontier",)),
        Analysis("circuits", script="analyze_circuits", reads=lm,
                 params={"dicts": cfg["dicts"], "analysis": cfg["analysis"]}, figures=("patching",)),
    ]
