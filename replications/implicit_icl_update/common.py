"""What this paper's scripts share: the trained blocks (float64, frozen) and fresh test prompts."""
import torch

from shared.data.icl_regression import embed, sample_prompts
from shared.pipeline.run import load_models as load_checkpoint

from .model import build


def load_models(path):
    """{name: model in float64}, {name: spec}, metadata. Names are <model>_s<seed> and <model>_s<seed>_init."""
    models, specs, meta = load_checkpoint(path, build)
    return {k: m.double() for k, m in models.items()}, specs, meta


def test_prompts(run, p, stream="test"):
    """(Z, y_q): `test_tasks` fresh prompts of n examples in float64, from the analysis's own seed stream."""
    pr = sample_prompts(p["test_tasks"], p["n"], p["d"], run.generator(0, stream), dtype=torch.float64)
    return embed(pr), pr.y[:, -1]


def trained(specs, model):
    """Names of the trained runs of config model `model` (one per seed), in seed order."""
    return [n for n, s in sorted(specs.items(), key=lambda kv: kv[1]["seed"])
            if s["trained"] and n.rsplit("_s", 1)[0] == model]
