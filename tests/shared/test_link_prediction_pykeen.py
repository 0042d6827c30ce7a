"""shared.train.link_prediction's filtered ranking equals PyKEEN's RankBasedEvaluator (pykeen is a pinned dependency)
on Nations (the copy in PyKEEN's wheel, through the registry) with a random DistMult: MRR and Hits@1/3/10 over both
sides. Our ties count half, which is PyKEEN's "realistic" rank (the mean of its optimistic and pessimistic ranks);
integer-valued embeddings make many exact ties, so the tie rule is what is compared, not only the ordering."""
import json

import pytest
import torch

from shared.data import load
from shared.nn.relation_scoring import RelationScorer
from shared.train.link_prediction import filtered_ranks, rank_metrics

pykeen = pytest.importorskip("pykeen")
from pykeen.evaluation import RankBasedEvaluator  # noqa: E402
from pykeen.models import DistMult  # noqa: E402
from pykeen.triples import CoreTriplesFactory  # noqa: E402

DIM = 8


def nations():
    graph = load("nations")
    splits = {k: torch.from_numpy(graph[k]) for k in ("train", "valid", "test")}
    return splits, len(json.loads(graph["entities"])), len(json.loads(graph["relations"]))


def both(integer):
    """Our DistMult and PyKEEN's with the same embeddings (integers in -2..2, or Gaussian)."""
    splits, n_entities, n_relations = nations()
    g = torch.Generator().manual_seed(0)
    draw = (lambda *s: torch.randint(-2, 3, s, generator=g).float()) if integer else (
        lambda *s: torch.randn(*s, generator=g))
    entity, relation = draw(n_entities, DIM), draw(n_relations, DIM)
    ours = RelationScorer("distmult", n_entities, n_relations, DIM)
    factory = CoreTriplesFactory.create(splits["train"], num_entities=n_entities, num_relations=n_relations)
    theirs = DistMult(triples_factory=factory, embedding_dim=DIM, random_seed=0)
    with torch.no_grad():
        ours.entity.copy_(entity), ours.relation.copy_(relation)
        theirs.entity_representations[0]._embeddings.weight.copy_(entity)
        theirs.relation_representations[0]._embeddings.weight.copy_(relation)
    return splits, n_entities, n_relations, ours.eval(), theirs.eval()


@pytest.mark.parametrize("integer", [True, False], ids=["ties", "gaussian"])
def test_filtered_metrics_equal_pykeen_realistic(integer):
    splits, n_entities, n_relations, ours, theirs = both(integer)
    known = torch.cat([splits["train"], splits["valid"]])
    ranks = filtered_ranks(ours, splits["test"], known, n_entities, n_relations)
    metrics = rank_metrics(ranks)
    result = RankBasedEvaluator(filtered=True).evaluate(theirs, splits["test"], additional_filter_triples=[known],
                                                        batch_size=256, use_tqdm=False)
    if integer:  # the tie rule decides the numbers here: optimistic and pessimistic ranks give other ones
        for rule in ("optimistic", "pessimistic"):
            assert abs(metrics["mrr"] - result.get_metric(f"both.{rule}.inverse_harmonic_mean_rank")) > 1e-3
    assert metrics["mrr"] == pytest.approx(result.get_metric("both.realistic.inverse_harmonic_mean_rank"), abs=1e-6)
    for k in (1, 3, 10):
        assert metrics[f"hits@{k}"] == pytest.approx(result.get_metric(f"both.realistic.hits_at_{k}"), abs=1e-6)
