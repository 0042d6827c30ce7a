"""hopfield: the Python side of its workflow. See shared/pipeline/paper.py.

One training step, three analyses: `theory` (identities, energy descent and capacity on synthetic patterns, no data,
no training), `retrieval` (one-step retrieval and fixed-point regimes on stored MNIST-5k images) and `mil` (reads
`train_mil`'s learners of MNIST bags: Hopfield pooling against mean, max and attention-MIL pooling).
"""
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train_mil": Resources(gpu=False, threads=4, mem_mb=4000, runtime=120),
    "analyze": Resources(gpu=False, threads=4, mem_mb=8000, runtime=120),
}
DATA = "data/prepared/mnist_5k.safetensors"
TRAIN_IMAGES, TEST_IMAGES = 4000, 1000


def check(cfg):
    """Cross-key checks: the named betas are in the grid, the stored sets fit the training images, the MIL run
    has every pooling its claims compare and at least one batch per epoch."""
    r, m = cfg["retrieval"], cfg["mil"]
    if cfg["energy"]["d"] % 4:
        raise ConfigError(f"'energy.d': {cfg['energy']['d']} is not divisible by 4 (allowed: multiples of 4, the "
                          f"projected layer checked has 4 heads)")
    for key in ("main_beta", "small_beta"):
        if r[key] not in r["betas"]:
            raise ConfigError(f"'retrieval.{key}': {r[key]} is not in 'retrieval.betas' (allowed: one of {r['betas']})")
    if r["main_n"] not in r["n_stored"]:
        raise ConfigError(f"'retrieval.main_n': {r['main_n']} is not in 'retrieval.n_stored' "
                          f"(allowed: one of {r['n_stored']})")
    if max(r["n_stored"]) > TRAIN_IMAGES:
        raise ConfigError(f"'retrieval.n_stored': {max(r['n_stored'])} exceeds the {TRAIN_IMAGES} training images "
                          f"of mnist_5k (allowed: 2 .. {TRAIN_IMAGES})")
    if set(m["poolings"]) != {"hopfield", "mean", "max", "attention"}:
        raise ConfigError(f"'mil.poolings': {m['poolings']} must hold hopfield, mean, max and attention "
                          f"(allowed: those four, the claims compare them)")
    if m["batch_size"] > m["train_bags"]:
        raise ConfigError(f"'mil.batch_size': {m['batch_size']} exceeds 'mil.train_bags' {m['train_bags']} "
                          f"(allowed: 1 .. {m['train_bags']})")


def mil_paths(paper):
    return {"checkpoint": paper.out("models/mil.safetensors"), "history": paper.out("models/mil.json")}


def steps(paper):
    return [Step("train_mil", script="train_mil", priority=1, inputs={"data": DATA}, outputs=mil_paths(paper),
                 params={"device": paper.cfg["device"], "mil": paper.cfg["mil"]})]


def analyses(paper):
    cfg = paper.cfg
    return [
        Analysis("theory", script="analyze_theory", params={"energy": cfg["energy"], "capacity": cfg["capacity"]},
                 figures=("capacity",)),
        Analysis("retrieval", script="analyze_retrieval", reads={"data": DATA}, params={"retrieval": cfg["retrieval"]},
                 figures=("retrieval",)),
        Analysis("mil", script="analyze_mil", reads={"checkpoint": mil_paths(paper)["checkpoint"], "data": DATA},
                 params={"mil": cfg["mil"]}),
    ]


def skipped(paper):
    """The paper's own benchmarks, which no config here runs: their claims read NOT RUN with this reason."""
    return {"benchmarks": "the paper's MIL benchmarks (Tiger, Fox, Elephant, UCSB), immune repertoires, UCI and drug "
                          "design: their data cannot be pinned offline here (dossier 6.2, 6.3)"}
