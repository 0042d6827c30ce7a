"""A cross-key check that follows another key (the bad configs that only need to stop the parse are
tests/bad_config.yaml, checked by tests/papers/test_paper_configs.py). Config loading only: no training."""
import pytest

from shared.pipeline.config import ConfigError
from shared.pipeline.paper import load_papers

PAPER = "linearizer"


def test_projective_rank_follows_a_resized_dataset():
    # mnist resized to 8 x 8 has 64 values: a rank of 64 would make the projector the identity
    override = {"datasets": {"mnist": {"size": 8}},
                "models": {"projective": {"dataset": "mnist", "model": {"rank": 64}}}}
    with pytest.raises(ConfigError, match=r"'models.projective.model.rank': 64 is not below the 64 values"):
        load_papers([PAPER], "quick", {PAPER: {"quick": override}})
    override["models"]["projective"]["model"]["rank"] = 63
    paper = load_papers([PAPER], "quick", {PAPER: {"quick": override}})[PAPER]
    assert paper.cfg["models"]["projective"]["model"]["rank"] == 63
