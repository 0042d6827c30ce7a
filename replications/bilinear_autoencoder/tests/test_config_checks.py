"""Bad input never passes silently: sizes have upper bounds in the schema, and the cross-key mistakes that would
otherwise fail only inside a job (pipeline.check, and the flagship's run read while declaring the analyses) stop
the parse, naming the key. Config loading only (with bilinear_mlp, which this paper needs): no training."""
import pytest

from shared.pipeline.config import ConfigError
from shared.pipeline.paper import load_papers

PAPER = "bilinear_autoencoder"
QWEN = {"source": "language_model", "model": "some/model", "layer": 1, "tokens": 4096, "test_tokens": 100,
        "context": 16}


def _load(override, tier="quick"):
    return load_papers([PAPER], tier, {PAPER: {tier: override}})[PAPER]


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_load(tier):
    assert _load({}, tier).cfg["tier"] == tier


@pytest.mark.parametrize("override, key", [
    ({"train": {"steps": 10**12}}, "train.steps"),
    ({"expansion": 10**9}, "expansion"),
    ({"topk": {"ks": [10**9]}}, "topk.ks.0"),
    ({"topk": {"batch_size": 10**9}}, "topk.batch_size"),
    # a dataset is one of three sources (oneOf): the error names the key inside the form its `source` selects
    ({"datasets": {"planted": {"d": 10**9}}}, "datasets.planted.d"),
    ({"datasets": {"planted": {"train": 10**12}}}, "datasets.planted.train"),
    ({"datasets": {"mnist_bilinear": {"expansion": 10**6}}}, "datasets.mnist_bilinear.expansion"),
    ({"analysis": {"prefix": {"points": 10**9}}}, "analysis.prefix.points"),
    ({"alphas": [0.0, 1e6]}, "alphas.1"),
])
def test_schema_bounds_sizes(override, key):
    with pytest.raises(ConfigError, match=rf"invalid config key '{key}'"):
        _load(override)


def test_language_model_sizes_are_bounded():
    with pytest.raises(ConfigError, match=r"invalid config key 'datasets.qwen.tokens'"):
        _load({"datasets": {"qwen": {**QWEN, "tokens": 10**12}}})


@pytest.mark.parametrize("override, key, why", [
    # TopK k above the number of latents: planted d = 32 x topk.expansion 8 = 256
    ({"topk": {"ks": [2, 300]}}, "topk.ks", "300 exceeds the 256 latents of dataset 'planted'"),
    # ... and the flagship's d_hidden = 50 x 8 = 400 (planted widened so that it passes)
    ({"datasets": {"planted": {"d": 64}}, "topk": {"ks": [450]}}, "topk.ks",
     "450 exceeds the 400 latents of dataset 'mnist_bilinear'"),
    ({"analysis": {"prefix": {"chunks": 272}}}, "analysis.prefix.chunks", "exceeds the 256 latents of dataset 'planted'"),
    ({"analysis": {"prefix": {"chunks": 208}}}, "analysis.prefix.chunks",
     "exceeds the 200 latents of dataset 'mnist_bilinear'"),  # the flagship's own expansion 4 x 50
    ({"analysis": {"manifold": {"neighbours": 256}}}, "analysis.manifold.neighbours", "is not below the 256 latents"),
    ({"analysis": {"manifold": {"purity_top": 300}}}, "analysis.manifold.purity_top", "is not below the 256 latents"),
    ({"alphas": [0.0, 0.001, 1.0]}, "alphas", "give the same run name 'vanilla_a0'"),
    ({"datasets": {"qwen": QWEN}}, "datasets.qwen.test_tokens", "is fewer than one held-out batch"),
    ({"analysis": {"batch_size": 2000}}, "analysis.batch_size", "exceeds the 1000 held-out images"),
])
def test_cross_key_mistakes_stop_the_parse(override, key, why):
    with pytest.raises(ConfigError, match=rf"^{PAPER} \(quick tier\): '{key}'") as error:
        _load(override)
    assert why in str(error.value)
