"""Bad input never passes silently: sizes have upper bounds in the schema, and the cross-key mistakes that would
otherwise fail only inside a job (pipeline.check) stop the parse, naming the key. Config loading only: no training."""
import pytest

from shared.pipeline.config import ConfigError
from shared.pipeline.paper import load_papers

PAPER = "linearizer"


def _load(override, tier="quick"):
    return load_papers([PAPER], tier, {PAPER: {tier: override}})[PAPER]


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_load(tier):
    assert _load({}, tier).cfg["tier"] == tier


@pytest.mark.parametrize("override, key", [
    ({"models": {"digits": {"train": {"steps": 10**12}}}}, "models.digits.train.steps"),
    ({"models": {"digits": {"model": {"flow": {"hidden": 10**9}}}}}, "models.digits.model.flow.hidden"),
    ({"models": {"digits": {"model": {"time_hidden": 10**9}}}}, "models.digits.model.time_hidden"),
    ({"models": {"digits": {"train": {"batch_size": 10**7}}}}, "models.digits.train.batch_size"),
    ({"models": {"projective": {"train": {"noise_draws": 10**7}}}}, "models.projective.train.noise_draws"),
    ({"datasets": {"eight_gaussians": {"train": 10**10}}}, "datasets.eight_gaussians.train"),
    ({"datasets": {"mnist": {"size": 4096}}}, "datasets.mnist.size"),
    ({"analysis": {"samples": 10**9}}, "analysis.samples"),
    ({"analysis": {"energy_points": 10**6}}, "analysis.energy_points"),
    ({"analysis": {"seed": 2**40}}, "analysis.seed"),
])
def test_schema_bounds_sizes(override, key):
    with pytest.raises(ConfigError, match=rf"invalid config key '{key}'"):
        _load(override)


@pytest.mark.parametrize("override, key, why", [
    ({"models": {"projective": {"model": {"rank": 64}}}}, "models.projective.model.rank",
     "is not below the 64 values of a digits example"),
    ({"datasets": {"mnist": {"layout": "image", "size": 31}}}, "datasets.mnist.size", "is odd"),
    ({"datasets": {"digits": {"size": 16}}}, "datasets.digits.size", "is not used"),
    ({"analysis": {"algebra": {"inputs": 451}}}, "analysis.algebra.inputs",
     "exceeds the 450 held-out examples of model 'digits'"),
    ({"analysis": {"algebra": {"model": "toy", "inputs": 6000}}}, "analysis.algebra.inputs",
     "exceeds the 5000 held-out examples of model 'toy'"),
])
def test_cross_key_mistakes_stop_the_parse(override, key, why):
    with pytest.raises(ConfigError, match=rf"^{PAPER} \(quick tier\): '{key}'") as error:
        _load(override)
    assert why in str(error.value)


def test_projective_rank_follows_a_resized_dataset():
    # mnist resized to 8 x 8 has 64 values: a rank of 64 would make the projector the identity
    override = {"datasets": {"mnist": {"size": 8}},
                "models": {"projective": {"dataset": "mnist", "model": {"rank": 64}}}}
    with pytest.raises(ConfigError, match=r"'models.projective.model.rank': 64 is not below the 64 values"):
        _load(override)
    override["models"]["projective"]["model"]["rank"] = 63
    assert _load(override).cfg["models"]["projective"]["model"]["rank"] == 63
