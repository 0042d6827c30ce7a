"""Parse-time constants of pipeline.py agree with the model (the bad configs are tests/bad_config.yaml, checked by
tests/papers/test_paper_configs.py)."""
from replications.bilinear_rnn import model, pipeline


def test_parse_time_constants_match_the_model():
    assert pipeline.BASELINES == model.BASELINES
    assert model.TransformerTracker.__init__.__defaults__[-1] == pipeline.TRANSFORMER_HEADS
