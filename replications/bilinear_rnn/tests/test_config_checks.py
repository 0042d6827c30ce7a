"""Bad input never passes silently: sizes have upper bounds in the schema, and the cross-key mistakes that would
otherwise fail only inside a job (pipeline.check) stop the parse, naming the key. Config loading only: no training."""
import pytest

from shared.pipeline.config import ConfigError
from shared.pipeline.paper import load_papers

from replications.bilinear_rnn import model, pipeline

PAPER = "bilinear_rnn"


def _load(override, tier="quick"):
    return load_papers([PAPER], tier, {PAPER: {tier: override}})[PAPER]


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_load(tier):
    assert _load({}, tier).cfg["tier"] == tier


@pytest.mark.parametrize("override, key", [
    ({"experiments": {"full": {"steps": 10**12}}}, "experiments.full.steps"),
    ({"d_hidden": 10**9}, "d_hidden"),
    ({"experiments": {"lstm": {"d_hidden": 10**9}}}, "experiments.lstm.d_hidden"),
    ({"experiments": {"cp_small": {"rank": 10**9}}}, "experiments.cp_small.rank"),
    ({"schedule": {"batch_size": 10**7}}, "schedule.batch_size"),
    ({"schedule": {"max_length": 10**6}}, "schedule.max_length"),
    ({"test": {"sequences": 10**8}}, "test.sequences"),
    ({"analysis": {"frozen_draws": 10**9}}, "analysis.frozen_draws"),
    ({"lrs": [1000.0]}, "lrs.0"),
    ({"experiments": {"full": {"tasks": ["fsm100000"]}}}, "experiments.full.tasks.0"),
])
def test_schema_bounds_sizes(override, key):
    with pytest.raises(ConfigError, match=rf"invalid config key '{key}'"):
        _load(override)


@pytest.mark.parametrize("override, key, why", [
    ({"schedule": {"min_length": 12, "max_length": 10}}, "schedule.min_length", "exceeds schedule.max_length = 10"),
    ({"experiments": {"block2": {"block": 3}}}, "experiments.block2.block", "does not divide d_hidden = 32"),
    ({"experiments": {"block2": {"d_hidden": 30, "block": 4}}}, "experiments.block2.block",
     "does not divide d_hidden = 30"),
    ({"d_hidden": 34}, "d_hidden", "does not split into the transformer's 4 heads"),  # the tier's width, no override
    ({"experiments": {"rotation": {"d_hidden": 31}}}, "experiments.rotation.d_hidden", "is odd"),
    ({"experiments": {"transformer": {"d_hidden": 30}}}, "experiments.transformer.d_hidden",
     "does not split into the transformer's 4 heads"),
    ({"analysis": {"eigen_experiment": "lstm", "eigen_task": "modadd5"}}, "analysis.eigen_experiment",
     "is a lstm baseline"),
])
def test_cross_key_mistakes_stop_the_parse(override, key, why):
    with pytest.raises(ConfigError, match=rf"^{PAPER} \(quick tier\): '{key}'") as error:
        _load(override)
    assert why in str(error.value)


def test_parse_time_constants_match_the_model():
    assert pipeline.BASELINES == model.BASELINES
    assert model.TransformerTracker.__init__.__defaults__[-1] == pipeline.TRANSFORMER_HEADS
