"""Inputs refused before they can produce a report that looks right: data protocols (distmult's training split, test
entities training never saw), heads that do not split the model width, and a render that fails midway."""
import json
from pathlib import Path

import numpy as np
import pytest

from shared.data import DataRefused, write_safetensors
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import load_papers
from shared.pipeline.report import render

ROOT = Path(__file__).resolve().parents[2]


def refusal(paper, overrides, tier="quick"):
    with pytest.raises(ConfigError) as error:
        load_papers([paper], tier, {paper: overrides}, root=ROOT)
    return str(error.value)


def test_a_training_split_too_small_for_its_entities_is_refused():
    message = refusal("distmult", {"quick": {"family": {"train_fraction": 0.05}}})
    assert message.startswith("distmult (quick tier): 'family.train_fraction': 0.05 leaves 73 training triples "
                              "for 174 entities; 78 entities of test")


def test_the_same_in_the_tier_not_run_is_refused_too():
    message = refusal("distmult", {"full": {"family": {"train_fraction": 0.05}}})
    assert message.startswith("distmult (full tier, --config override of a tier not run): 'family.train_fraction'")


def test_a_test_entity_unseen_in_training_is_refused(tmp_path):
    from replications.distmult.common import load_graph

    path = tmp_path / "graph.safetensors"
    triples = {"train": [[0, 0, 1], [1, 0, 2]], "valid": [[0, 0, 2]], "test": [[2, 0, 3]]}  # entity 3: test only
    write_safetensors({k: np.array(v, dtype=np.int64) for k, v in triples.items()}, path,
                      {"dataset": "four", "entities": json.dumps(list("abcd")), "relations": json.dumps(["r"])})
    with pytest.raises(DataRefused, match=r"graph.safetensors: 1 entities of its test triples never occur in "
                                          r"training \(ids \[3\]\)"):
        load_graph(path)


@pytest.mark.parametrize("paper, overrides, key", [
    ("equivalent_linear_mappings", {"quick": {"model": {"n_head": 3}}}, "'model.n_head': d_model 64"),
    ("bilinear_mlp", {"quick": {"language": {"model": {"n_head": 3}}}}, "'language.model.n_head': d_model 64"),
])
def test_heads_that_do_not_split_the_model_width_are_refused(paper, overrides, key):
    assert key in refusal(paper, overrides)


def test_a_render_that_fails_leaves_the_last_report_whole(tmp_path):
    paper_dir, out = tmp_path / "replications" / "toy", tmp_path / "reports" / "toy" / "quick"
    paper_dir.mkdir(parents=True)
    (paper_dir / "claims.yaml").write_text(
        "paper: toy\ntitle: Toy\nclaims:\n  - {id: c, kind: identity, statement: s, source: S1, metric: m.nothing,"
        " check: is_true, tiers: {quick: ~}}\n")
    metrics = tmp_path / "m.json"
    metrics.write_text(json.dumps({"metrics": {"value": True}}))
    out.mkdir(parents=True)
    (out / "report.md").write_text("the committed report\n")
    with pytest.raises(ValueError, match="claim 'c': key 'metric' is 'm.nothing'"):
        render("toy", "quick", paper_dir, [metrics], [], out)
    assert (out / "report.md").read_text() == "the committed report\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["quick"]  # no half-written copy left beside it


def test_a_key_not_written_under_overrides_reads_not_run_with_the_reason(tmp_path):
    """A run off the committed config may drop what an analysis measures (a tiny config drops a dataset)."""
    from shared.pipeline.claims import check_metrics_written, load_claims

    paths = [tmp_path / "m.json"]
    paths[0].write_text(json.dumps({"metrics": {"value": True}}))
    (tmp_path / "claims.yaml").write_text(
        "paper: toy\ntitle: Toy\nclaims:\n  - {id: c, kind: identity, statement: s, source: S1, metric: m.nothing,"
        " check: is_true, tiers: {quick: ~}}\n")
    doc = load_claims(tmp_path / "claims.yaml")
    reasons = check_metrics_written(doc, "quick", {"m.value": True}, {}, paths, "claims.yaml", overridden=True)
    assert list(reasons) == ["m.nothing"] and "config differs from the committed one" in reasons["m.nothing"]


def test_a_list_of_the_wrong_length_says_how_long_it_must_be():
    assert refusal("distmult", {"quick": {"family": {"children": [2]}}}).endswith(
        "invalid config key 'family.children': [2] is too short (allowed: exactly 2 items)")
