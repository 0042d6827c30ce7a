"""Every paper's configs, in process (no Snakemake): both committed tiers load, and each config mistake listed in the
paper's tests/bad_config.yaml stops the parse with a ConfigError that names the paper, the tier and the key."""
from pathlib import Path

import pytest
import yaml

from shared.pipeline.config import ConfigError
from shared.pipeline.paper import discover_papers, load_papers

REPLICATIONS = Path(__file__).resolve().parents[2] / "replications"
PAPERS = discover_papers(REPLICATIONS)


def bad_configs():
    """(paper, case) for every entry of every paper's tests/bad_config.yaml: {override, key, tier?, why?}."""
    for paper in PAPERS:
        path = REPLICATIONS / paper / "tests" / "bad_config.yaml"
        for i, case in enumerate(yaml.safe_load(path.read_text()) if path.is_file() else []):
            yield pytest.param(paper, case, id=f"{paper}-{i}-{case['key']}")


@pytest.mark.parametrize("tier", ["quick", "full"])
@pytest.mark.parametrize("paper", PAPERS)
def test_committed_tiers_load(paper, tier):
    assert load_papers([paper], tier, {})[paper].cfg["tier"] == tier


@pytest.mark.parametrize("paper, case", list(bad_configs()))
def test_bad_config_stops_the_parse(paper, case):
    assert set(case) <= {"override", "key", "tier", "why"}, f"{paper}/tests/bad_config.yaml: unknown fields {case}"
    tier = case.get("tier", "quick")
    with pytest.raises(ConfigError) as error:
        load_papers([paper], tier, {paper: {tier: case["override"]}})
    message = str(error.value)
    assert message.startswith(f"{paper} ({tier} tier): ") and f"'{case['key']}'" in message, message
    assert case.get("why", "") in message, message
