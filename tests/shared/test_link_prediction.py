"""Filtered ranking metrics against brute-force ranking on a small graph, and both training recipes learning it."""
import itertools

import pytest
import torch

from shared.nn.relation_scoring import KINDS, RelationScorer
from shared.train.link_prediction import filtered_ranks, rank_metrics, train_1n, train_margin

N, R = 12, 3


def small_graph(seed=0):
    g = torch.Generator().manual_seed(seed)
    triples = torch.unique(torch.stack([torch.randint(N, (60,), generator=g), torch.randint(R, (60,), generator=g),
                                        torch.randint(N, (60,), generator=g)], -1), dim=0)
    return triples[torch.randperm(len(triples), generator=g)]


def brute_force(model, test, known):
    """Rank by the definition, one candidate at a time (ties count half; other true triples are skipped)."""
    known = {tuple(t) for t in known.tolist()} | {tuple(t) for t in test.tolist()}
    ranks = {"tail": [], "head": []}
    with torch.no_grad():
        for (h, r, t), direction in itertools.product(test.tolist(), ("tail", "head")):
            true = model(torch.tensor([[h, r, t]])).item()
            others = [(h, r, e) if direction == "tail" else (e, r, t) for e in range(N)]
            scores = [model(torch.tensor([c])).item() for c in others if c not in known]
            ranks[direction].append(1 + sum(s > true for s in scores) + sum(s == true for s in scores) / 2)
    return {k: torch.tensor(v) for k, v in ranks.items()}


class Rounded(torch.nn.Module):
    """A scorer whose scores are rounded, so that ties (which the metric counts half) occur."""

    def __init__(self, model):
        super().__init__()
        self.model, self.entity = model, model.entity

    def forward(self, triples):
        return torch.round(self.model(triples) * 2)

    def score_tails(self, heads, relations):
        return torch.round(self.model.score_tails(heads, relations) * 2)

    def score_heads(self, relations, tails):
        return torch.round(self.model.score_heads(relations, tails) * 2)


@pytest.mark.parametrize("kind", KINDS)
def test_filtered_ranks_equal_brute_force(kind):
    triples = small_graph()
    torch.manual_seed(1)
    model = RelationScorer(kind, N, R, 4).double()
    test, known = triples[:15], triples
    fast = filtered_ranks(model, test, known, N, R, batch_size=4)
    slow = brute_force(model, test, known)
    for direction in ("tail", "head"):
        torch.testing.assert_close(fast[direction].double(), slow[direction].double())


def test_filtered_ranks_with_ties_and_filter():
    triples = small_graph(2)
    torch.manual_seed(0)
    model = Rounded(RelationScorer("distmult", N, R, 4).double())
    fast = filtered_ranks(model, triples[:20], triples, N, R)
    slow = brute_force(model, triples[:20], triples)
    assert any((v != v.round()).any() for v in slow.values())  # half ranks: the test has ties
    for direction in ("tail", "head"):
        torch.testing.assert_close(fast[direction].double(), slow[direction].double())
    unfiltered = brute_force(model, triples[:20], triples[:20])  # a smaller filter can only worsen ranks
    assert all((unfiltered[d] >= slow[d]).all() for d in slow)


def test_rank_metrics():
    metrics = rank_metrics({"tail": torch.tensor([1.0, 2.0]), "head": torch.tensor([4.0, 20.0])})
    assert metrics["mrr"] == pytest.approx((1 + 0.5 + 0.25 + 0.05) / 4)
    assert metrics["hits@1"] == 0.25 and metrics["hits@3"] == 0.5 and metrics["hits@10"] == 0.75


@pytest.mark.parametrize("recipe", ["margin", "one_n"])
def test_training_fits_the_training_triples(recipe):
    triples = small_graph()
    torch.manual_seed(0)
    model = RelationScorer("distmult", N, R, 16)
    before = rank_metrics(filtered_ranks(model, triples, triples, N, R))["mrr"]
    g = torch.Generator().manual_seed(0)
    if recipe == "margin":
        train_margin(model, triples, N, epochs=30, batch_size=16, lr=0.1, n_negatives=4, generator=g)
        torch.testing.assert_close(model.entity.norm(dim=-1), torch.ones(N))  # the unit-norm constraint holds
    else:
        train_1n(model, triples, N, R, epochs=30, batch_size=16, lr=0.05, generator=g)
    after = rank_metrics(filtered_ranks(model, triples, triples, N, R))["mrr"]
    assert after > before + 0.2
