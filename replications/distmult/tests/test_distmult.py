"""distmult: the tiers' rule graphs (bad configs: bad_config.yaml); the rule-mining pieces on exact inputs; the model round trip."""
import pytest
import torch

from replications.distmult import analyze_rules, model
from shared.pipeline.paper import load_papers

PAPER = "distmult"


@pytest.mark.parametrize("tier", ["quick", "full"])
def test_committed_tiers_hold_the_rule_graphs(tier):
    assert {"kinships", "family"} <= set(load_papers([PAPER], tier, {})[PAPER].cfg["graphs"])


def test_build_round_trip():
    spec = {"kind": "ntn", "n_entities": 5, "n_relations": 2, "dim": 3, "ntn_slices": 2}
    torch.manual_seed(0)
    a = model.build(spec)
    b = model.build(spec)
    b.load_state_dict(a.state_dict())
    triples = torch.tensor([[0, 1, 4], [3, 0, 2]])
    assert torch.equal(a(triples), b(triples))


def test_rule_distances_find_a_planted_product_and_exclude_the_head():
    torch.manual_seed(0)
    scorer = model.build({"kind": "bilinear", "n_entities": 3, "n_relations": 3, "dim": 4})
    with torch.no_grad():
        scorer.relation[2] = scorer.relation[0] @ scorer.relation[1]  # plant M_2 = M_0 M_1
    dist = analyze_rules.rule_distances(scorer)
    assert dist[0, 1, 2] < 1e-6 and dist[1, 0, 2] > 1e-3  # the product does not commute
    assert torch.isinf(dist[2, 0, 2]) and torch.isinf(dist[0, 2, 2])
    assert analyze_rules.rank_of(dist[:, :, 2].reshape(-1), 0 * 3 + 1) == 1


def test_rule_confidence_on_a_chain():
    # r0: a->b, r1: b->c, r2: a->c (the rule r0 r1 => r2 holds), plus a path r0 r1 from d to f without r2
    triples = torch.tensor([[0, 0, 1], [1, 1, 2], [0, 2, 2], [3, 0, 4], [4, 1, 5]])
    confidence, support = analyze_rules.rule_confidence(triples, 6, 3)
    assert confidence[0, 1, 2].item() == 0.5 and support[0, 1, 2].item() == 1
    assert confidence[1, 0, 2].item() == 0.0
