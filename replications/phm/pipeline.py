"""phm: the Python side of its workflow. See shared/pipeline/paper.py.

Four training steps, four analyses: `teacher` (single PHM / quaternion / dense maps fitted to planted quaternion and
dense teachers, synthetic data made in the step) read by `teacher`; `images` (MLPs whose hidden maps are dense, PHM
at each n, or quaternion, on the registry's mnist_5k at the quick tier, MNIST at the full tier) read by `images`;
`digits` (the same MLPs on scikit-learn's 8x8 digits, written by the data_digits step) read by `digits`; `seq` (a
one-block Transformer encoder whose maps are dense or PHM at each n, and a bag of words, on a generated agreement
task made in the step) read by `seq`.
"""
from shared.data.registry import image_facts, shape_mismatch
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

CLAIMED_NS = (2, 4, 8)  # the n of PHM the claims read

RESOURCES = {
    "data_digits": Resources(gpu=False, threads=1, mem_mb=2000, runtime=10),
    "train_teacher": Resources(gpu=False, threads=1, mem_mb=2000, runtime=30),
    "train_seq": Resources(gpu=True, threads=4, mem_mb=4000, runtime=60),
    "train_images": Resources(gpu=True, threads=4, mem_mb=8000, runtime=120),
    "analyze": Resources(gpu=False, threads=2, mem_mb=8000, runtime=30),
}


DIGITS = {"d_input": 64, "n_classes": 10, "images": 1797}  # scikit-learn's digits (prepare_data.py)


def check_images(e, key):
    """One image experiment (`key`: images or digits): the data agree with the model; every claimed n is run and
    divides every map's sizes; a batch fits in the training split."""
    if e["dataset"] == "digits":
        for name in ("d_input", "n_classes"):
            if e[name] != DIGITS[name]:
                raise ConfigError(f"'{key}.{name}': {e[name]} does not match dataset 'digits' (allowed: "
                                  f"{DIGITS[name]})")
        if "test_fraction" not in e:
            raise ConfigError(f"'{key}.test_fraction': missing for dataset 'digits' (allowed: a number in (0, 1))")
        train = int(DIGITS["images"] * (1 - e["test_fraction"]))  # about: the split rounds per class
    else:
        if problem := shape_mismatch(e["dataset"], {f"{key}.d_input": e["d_input"],
                                                    f"{key}.n_classes": e["n_classes"]}):
            raise ConfigError(problem)
        train = image_facts(e["dataset"])["n_train"]
    if missing := [n for n in CLAIMED_NS if n not in e["ns"]]:
        raise ConfigError(f"'{key}.ns': {e['ns']} lacks {missing}; the claims read n = {list(CLAIMED_NS)}")
    for size in (e["d_input"], *e["hidden"]):
        if bad := [n for n in (*e["ns"], 4) if size % n]:
            raise ConfigError(f"'{key}.hidden': size {size} is not divisible by n = {bad} "
                              f"(allowed: multiples of {max(e['ns'])} and 4)")
    if e["batch_size"] > train:
        raise ConfigError(f"'{key}.batch_size': {e['batch_size']} exceeds the {train} training images "
                          f"(allowed: 1 .. {train})")


def check(cfg):
    """Cross-key checks: both image experiments (check_images), the teachers' d, the sequence task's shapes."""
    check_images(cfg["images"], "images")
    check_images(cfg["digits"], "digits")
    t = cfg["teacher"]
    if t["d"] % 8:
        raise ConfigError(f"'teacher.d': {t['d']} is not divisible by 8 (the students have n = 2, 4 and 8)")
    s = cfg["seq"]
    if missing := [n for n in CLAIMED_NS if n not in s["ns"]]:
        raise ConfigError(f"'seq.ns': {s['ns']} lacks {missing}; the claims read n = {list(CLAIMED_NS)}")
    for name in ("d_model", "d_ff"):
        if bad := [n for n in s["ns"] if s[name] % n]:
            raise ConfigError(f"'seq.{name}': {s[name]} is not divisible by n = {bad} (allowed: multiples of "
                              f"{max(s['ns'])})")
    if s["d_model"] % s["n_head"]:
        raise ConfigError(f"'seq.n_head': {s['n_head']} does not divide d_model = {s['d_model']}")
    low, high = s["attractors"]
    if low > high or s["max_prefix"] + 1 + high > s["length"]:
        raise ConfigError(f"'seq.attractors': {s['attractors']} do not fit after a subject at place "
                          f"{s['max_prefix']} of {s['length']} (allowed: low <= high <= length - max_prefix - 1)")
    if s["batch_size"] > s["n_train"]:
        raise ConfigError(f"'seq.batch_size': {s['batch_size']} exceeds n_train = {s['n_train']}")


def data_path(paper, e):
    """digits are written by this paper's data_digits step; registry datasets by the shared prepare_dataset rule."""
    if e["dataset"] == "digits":
        return paper.out("data/digits.safetensors")
    return f"data/prepared/{e['dataset']}.safetensors"


def steps(paper):
    cfg = paper.cfg
    out = [
        Step("train_teacher", script="train_teacher", priority=1, outputs=paper.model_files("teacher"),
             params={"device": cfg["device"], "teacher": cfg["teacher"]}),
        Step("train_seq", script="train_seq", priority=1, outputs=paper.model_files("seq"),
             params={"device": cfg["device"], "seq": cfg["seq"]}),
    ]
    for key in ("images", "digits"):
        e = cfg[key]
        if e["dataset"] == "digits":
            out.append(Step(f"data_{key}", script="prepare_data", outputs={"out": data_path(paper, e)},
                            params={"dataset": "digits", "test_fraction": e["test_fraction"]}))
        out.append(Step(f"train_{key}", script="train_images", priority=1, inputs={"data": data_path(paper, e)},
                        outputs=paper.model_files(key), params={"device": cfg["device"], "images": e},
                        resources="train_images"))
    return out


def analyses(paper):
    cfg = paper.cfg
    return [
        Analysis("teacher", script="analyze_teacher", reads=paper.model_files("teacher"),
                 params={"teacher": cfg["teacher"], "analysis": cfg["analysis"]}, figures=("teacher",)),
        *(Analysis(key, script="analyze_images", reads={**paper.model_files(key), "data": data_path(paper, cfg[key])},
                   params={"images": cfg[key], "analysis": cfg["analysis"]}, figures=("accuracy",))
          for key in ("images", "digits")),
        Analysis("seq", script="analyze_seq", reads=paper.model_files("seq"),
                 params={"seq": cfg["seq"], "analysis": cfg["analysis"]}, figures=("accuracy",)),
    ]
