"""The relation scorers of Yang et al. (2015): all-candidate scoring equals triple scoring, DistMult is symmetric and
equals the diagonal bilinear model, corruption and the margin loss do what the paper's objective says."""
import pytest
import torch

from shared.nn.relation_scoring import KINDS, RelationScorer, corrupt, margin_ranking_loss

N_ENTITIES, N_RELATIONS, DIM = 9, 4, 5


def scorer(kind, tanh=False):
    torch.manual_seed(0)
    return RelationScorer(kind, N_ENTITIES, N_RELATIONS, DIM, entity_tanh=tanh, ntn_slices=3).double()


@pytest.mark.parametrize("tanh", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_all_candidate_scores_equal_triple_scores(kind, tanh):
    model = scorer(kind, tanh)
    heads, rels, tails = torch.tensor([0, 3, 8]), torch.tensor([1, 0, 3]), torch.tensor([2, 2, 5])
    every = torch.arange(N_ENTITIES)
    for b in range(3):
        as_tails = model(torch.stack([heads[b].expand(N_ENTITIES), rels[b].expand(N_ENTITIES), every], -1))
        as_heads = model(torch.stack([every, rels[b].expand(N_ENTITIES), tails[b].expand(N_ENTITIES)], -1))
        torch.testing.assert_close(model.score_tails(heads, rels)[b], as_tails)
        torch.testing.assert_close(model.score_heads(rels, tails)[b], as_heads)


@pytest.mark.parametrize("kind", KINDS)
def test_shared_relation_scores_equal_triple_scores(kind):
    model = scorer(kind)
    g = torch.Generator().manual_seed(1)
    heads, tails = torch.randint(N_ENTITIES, (6, 4), generator=g), torch.randint(N_ENTITIES, (6, 4), generator=g)
    rels = torch.randint(N_RELATIONS, (6,), generator=g)
    triples = torch.stack([heads, rels[:, None].expand(-1, 4), tails], -1)
    torch.testing.assert_close(model.score_shared_relation(heads, rels, tails), model(triples.view(-1, 3)).view(6, 4))


def test_distmult_is_symmetric_and_the_diagonal_bilinear_model():
    distmult, bilinear = scorer("distmult"), scorer("bilinear")
    with torch.no_grad():
        bilinear.entity.copy_(distmult.entity)
        bilinear.relation.copy_(torch.diag_embed(distmult.relation))
    triples = torch.cartesian_prod(torch.arange(N_ENTITIES), torch.arange(N_RELATIONS), torch.arange(N_ENTITIES))
    assert torch.equal(distmult(triples), distmult(triples[:, [2, 1, 0]]))
    torch.testing.assert_close(distmult(triples), bilinear(triples))
    assert not torch.allclose(scorer("bilinear")(triples), scorer("bilinear")(triples[:, [2, 1, 0]]))


def test_relation_operators_compose_as_the_model_scores():
    # y1^T M_a M_b y2 is the score of the composed relation: the product is what EmbedRule compares with M_head
    model = scorer("distmult")
    ops = model.relation_operators()
    assert torch.equal(ops[0] @ ops[1], ops[1] @ ops[0])  # diagonal: commutative
    assert scorer("transe").relation_operators().shape == (N_RELATIONS, DIM)
    with pytest.raises(ValueError):
        scorer("ntn").relation_operators()


def test_corrupt_replaces_exactly_head_or_tail():
    triples = torch.tensor([[0, 1, 2], [3, 2, 4]]).repeat(50, 1)
    negatives = corrupt(triples, 1000, 7, torch.Generator().manual_seed(0))
    assert negatives.shape == (100, 7, 3)
    same = negatives == triples[:, None]
    assert same[..., 1].all()
    assert (same[..., 0] | same[..., 2]).all()  # the other end is kept
    replaced_head = ~same[..., 0]
    assert 0.3 < replaced_head.float().mean() < 0.7


def test_margin_ranking_loss():
    positive, negative = torch.tensor([2.0, 0.0]), torch.tensor([[0.5, 1.5], [-2.0, 0.0]])
    # row 0: max(0, 0.5 - 2 + 1) + max(0, 1.5 - 2 + 1) = 0 + 0.5; row 1: 0 + 1
    assert margin_ranking_loss(positive, negative).item() == pytest.approx(0.75)


def test_unknown_kind_and_renormalise():
    with pytest.raises(ValueError, match="unknown relation scorer"):
        RelationScorer("complex", 3, 1, 2)
    model = scorer("distmult")
    model.renormalise_entities()
    torch.testing.assert_close(model.entity.norm(dim=-1), torch.ones(N_ENTITIES, dtype=torch.float64))
