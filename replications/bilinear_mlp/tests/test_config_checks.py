"""Bad input never passes silently: sizes have upper bounds in the schema, and the cross-key mistakes that would
otherwise fail only inside a job (pipeline.check) stop the parse, naming the key. Config loading only: no training."""
import pytest

from shared.pipeline.config import ConfigError
from shared.pipeline.paper import load_papers

PAPER = "bilinear_mlp"


def _load(override, tier="quick"):
    return load_papers([PAPER], tier, {PAPER: {tier: override}})[PAPER]


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_load(tier):
    assert _load({}, tier).cfg["tier"] == tier


@pytest.mark.parametrize("override, key", [
    ({"experiments": {"base": {"epochs": 10**12}}}, "experiments.base.epochs"),
    ({"defaults": {"d_hidden": 10**9}}, "defaults.d_hidden"),
    ({"experiments": {"size": {"grid": {"d_hidden": [20, 10**9]}}}}, "experiments.size.grid.d_hidden.1"),
    ({"experiments": {"base": {"vary": [{"name": "wide", "d_hidden": 10**9}]}}}, "experiments.base.vary.0.d_hidden"),
    ({"experiments": {"base": {"batch_size": 10**7}}}, "experiments.base.batch_size"),
    ({"language": {"model": {"d_model": 10**6}}}, "language.model.d_model"),
    ({"language": {"sae": {"train_tokens": 10**12}}}, "language.sae.train_tokens"),
    ({"language": {"sae": {"doublings": 40}}}, "language.sae.doublings"),
    ({"boolean": {"n_inputs": 64}}, "boolean.n_inputs"),
    ({"lr": 5.0}, "lr"),
])
def test_schema_bounds_sizes(override, key):
    with pytest.raises(ConfigError, match=rf"invalid config key '{key}'"):
        _load(override)


@pytest.mark.parametrize("override, key, why", [
    ({"d_input": 1024}, "d_input", "does not match the image datasets (allowed: 784"),
    ({"n_classes": 5}, "n_classes", "does not match the image datasets (allowed: 10"),
    ({"analysis": {"adversarial": {"eigvecs": [0, 10]}}}, "analysis.adversarial.eigvecs", "is not below keys_per_class = 10"),
    ({"analysis": {"adversarial": {"keys_per_class": 600, "eigvecs": [0]}}}, "analysis.adversarial.keys_per_class",
     "exceeds the 512 eigenvectors of experiment 'adversarial'"),
    ({"experiments": {"size": {"grid": {"d_hidden": [20, 20]}}}}, "experiments.size", "run names are not unique"),
    ({"experiments": {"base": {"vary": [{"name": "a"}, {"name": "a", "bias": True}]}}}, "experiments.base",
     "run names are not unique"),
    ({"experiments": {"base": {"batch_size": 5000}}}, "experiments.base.batch_size",
     "exceeds the 4000 training images of 'mnist_5k'"),
    ({"experiments": {"similarity_task": {"task": {"target_rank": 400}}}}, "experiments.similarity_task.task.target_rank",
     "is beyond the 400 training images of digit 1"),
    ({"analysis": {"truncation_k": [0, 1, 2, 3, 4, 6, 8, 10]}}, "analysis.truncation_k", "lacks 5"),
])
def test_cross_key_mistakes_stop_the_parse(override, key, why):
    with pytest.raises(ConfigError, match=rf"^{PAPER} \(quick tier\): '{key}'") as error:
        _load(override)
    assert why in str(error.value)


def test_full_tier_limits_follow_its_datasets():
    # MNIST has 6,742 training 1s: the full tier's rank 1 is fine, 7,000 is not
    with pytest.raises(ConfigError, match=r"'experiments.similarity_task.task.target_rank': 7000 is beyond the 6742"):
        _load({"experiments": {"similarity_task": {"task": {"target_rank": 7000}}}}, "full")
    assert _load({"experiments": {"base": {"batch_size": 60000}}}, "full").cfg["experiments"]["base"]["batch_size"] == 60000
