"""Relation scoring layers of Yang et al. (ICLR 2015, "Embedding entities and relations", DistMult): an entity is a
vector y_e = f(W x_e) (x_e one-hot, so W x_e is an embedding row; f identity or tanh), a relation scores a pair
(y1, y2) with a linear map A_r^T [y1; y2], a bilinear map y1^T M_r y2, or both.

    distmult         y1^T diag(r) y2                     (the paper's "Bilinear-diag"; symmetric in y1, y2)
    bilinear         y1^T M_r y2, full M_r               (RESCAL-like; the paper's "Bilinear")
    bilinear_linear  y1^T M_r y2 + A_r^T [y1; y2]
    linear           A_r^T [y1; y2]
    transe           -||y1 + v_r - y2||_p                (Bordes et al. 2013; the paper's additive "DistAdd")
    ntn              u_r^T tanh(y1^T T_r y2 + V_r [y1; y2] + b_r)   (Socher et al. 2013), T_r of k slices

Every model scores a batch of triples (`forward`) and all entities as tails or heads at once (`score_tails`,
`score_heads`: (B, n_entities)), the latter vectorised for the kinds whose score factors (no per-candidate loop).
Also: the margin ranking loss and uniform head-or-tail corruption of the paper, and the relation operators that
EmbedRule composes (a matrix per relation, or a vector for the additive model).
"""
import torch
from torch import nn
from torch.nn import functional as F

KINDS = ("distmult", "bilinear", "bilinear_linear", "linear", "transe", "ntn")
MULTIPLICATIVE = ("distmult", "bilinear", "bilinear_linear")  # a relation operator M_r that composes by products


class RelationScorer(nn.Module):
    def __init__(self, kind, n_entities, n_relations, dim, entity_tanh=False, ntn_slices=4, transe_norm=1):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"unknown relation scorer {kind!r} (allowed: {', '.join(KINDS)})")
        self.kind, self.entity_tanh, self.transe_norm = kind, entity_tanh, transe_norm
        self.entity = nn.Parameter(torch.empty(n_entities, dim))
        nn.init.xavier_uniform_(self.entity)
        if kind in ("distmult", "transe"):
            self.relation = nn.Parameter(F.normalize(torch.randn(n_relations, dim), dim=-1))
        if kind in ("bilinear", "bilinear_linear"):
            # near identity plus noise: at init every relation scores like y1 . y2, as DistMult with r = 1
            self.relation = nn.Parameter(torch.eye(dim).repeat(n_relations, 1, 1) / dim ** 0.5
                                         + torch.randn(n_relations, dim, dim) / dim)
        if kind in ("linear", "bilinear_linear"):
            self.linear = nn.Parameter(torch.randn(n_relations, 2, dim) / dim ** 0.5)
        if kind == "ntn":
            self.tensor = nn.Parameter(torch.randn(n_relations, ntn_slices, dim, dim) / dim)
            self.linear = nn.Parameter(torch.randn(n_relations, ntn_slices, 2, dim) / dim ** 0.5)
            self.bias = nn.Parameter(torch.zeros(n_relations, ntn_slices))
            self.out = nn.Parameter(torch.randn(n_relations, ntn_slices) / ntn_slices ** 0.5)

    def entities(self, index=None):
        y = self.entity if index is None else self.entity[index]
        return torch.tanh(y) if self.entity_tanh else y

    def forward(self, triples):
        """Scores (B,) of (head, relation, tail) id triples (B, 3)."""
        h, r, t = triples.unbind(-1)
        return self.score_shared_relation(h[:, None], r, t[:, None])[:, 0]

    def score_shared_relation(self, heads, relations, tails):
        """Scores (B, K) of (heads[b, k], relations[b], tails[b, k]): a positive and its corruptions share their
        relation, so its parameters (a d x d matrix for the bilinear kinds) are gathered once per row, not K times."""
        y1, y2, r = self.entities(heads), self.entities(tails), relations
        if self.kind == "transe":
            return -torch.linalg.vector_norm(y1 + self.relation[r][:, None] - y2, ord=self.transe_norm, dim=-1)
        if self.kind == "ntn":
            bilinear = torch.einsum("bni,bkij,bnj->bnk", y1, self.tensor[r], y2)
            linear = (torch.einsum("bki,bni->bnk", self.linear[r, :, 0], y1)
                      + torch.einsum("bki,bni->bnk", self.linear[r, :, 1], y2))
            return (self.out[r][:, None] * torch.tanh(bilinear + linear + self.bias[r][:, None])).sum(-1)
        score = torch.zeros(y1.shape[:2], dtype=y1.dtype, device=y1.device)
        if self.kind == "distmult":
            score = (y1 * self.relation[r][:, None] * y2).sum(-1)
        if self.kind in ("bilinear", "bilinear_linear"):
            score = torch.einsum("bni,bij,bnj->bn", y1, self.relation[r], y2)
        if self.kind in ("linear", "bilinear_linear"):
            score = score + (self.linear[r, 0][:, None] * y1).sum(-1) + (self.linear[r, 1][:, None] * y2).sum(-1)
        return score

    def score_tails(self, heads, relations):
        """(B, n_entities): the score of (h_b, r_b, e) for every entity e."""
        return self._score_all(heads, relations, tails=True)

    def score_heads(self, relations, tails):
        """(B, n_entities): the score of (e, r_b, t_b) for every entity e."""
        return self._score_all(tails, relations, tails=False)

    def _score_all(self, known, r, tails):
        y, every = self.entities(known), self.entities()
        if self.kind == "transe":  # tails: -||y + v - e||; heads: -||e + v - y|| = -||(y - v) - e||
            anchor = y + self.relation[r] if tails else y - self.relation[r]
            return -torch.cdist(anchor, every, p=self.transe_norm)
        if self.kind == "ntn":  # no factorisation: every candidate scored as a corruption of its row's relation
            candidates = torch.arange(len(every), device=known.device).expand(len(known), -1)
            anchors = known[:, None].expand_as(candidates)
            return (self.score_shared_relation(anchors, r, candidates) if tails
                    else self.score_shared_relation(candidates, r, anchors))
        score = torch.zeros(len(known), len(every), dtype=y.dtype, device=y.device)
        if self.kind == "distmult":
            score = (y * self.relation[r]) @ every.T
        if self.kind in ("bilinear", "bilinear_linear"):
            m = self.relation[r] if tails else self.relation[r].transpose(1, 2)
            score = torch.einsum("bi,bij->bj", y, m) @ every.T
        if self.kind in ("linear", "bilinear_linear"):
            a_known, a_every = (self.linear[r, 0], self.linear[r, 1]) if tails else (self.linear[r, 1], self.linear[r, 0])
            score = score + (a_known * y).sum(-1, keepdim=True) + a_every @ every.T
        return score

    def relation_operators(self):
        """What EmbedRule composes: (R, d, d) matrices M_r for multiplicative kinds (diag(r) for DistMult), (R, d)
        translation vectors for TransE (composition is addition)."""
        if self.kind == "distmult":
            return torch.diag_embed(self.relation)
        if self.kind in ("bilinear", "bilinear_linear"):
            return self.relation
        if self.kind == "transe":
            return self.relation
        raise ValueError(f"{self.kind} has no single relation operator to compose")

    @torch.no_grad()
    def renormalise_entities(self):
        """Project entity vectors onto the unit sphere (the paper's unit-norm constraint, applied after each step)."""
        self.entity.copy_(F.normalize(self.entity, dim=-1))


def margin_ranking_loss(positive, negative, margin=1.0):
    """sum_{negatives} max(0, s(neg) - s(pos) + margin), averaged over positives; negative is (B, k)."""
    return F.relu(negative - positive.unsqueeze(-1) + margin).sum(-1).mean()


def corrupt(triples, n_entities, n_negatives, generator):
    """(B, k, 3) on the CPU: each positive with its head or its tail (probability 1/2 each) replaced by a uniform entity."""
    batch = triples.unsqueeze(1).repeat(1, n_negatives, 1)
    replace_head = torch.rand(batch.shape[:2], generator=generator) < 0.5
    random_entity = torch.randint(n_entities, batch.shape[:2], generator=generator)
    batch[..., 0] = torch.where(replace_head, random_entity, batch[..., 0])
    batch[..., 2] = torch.where(replace_head, batch[..., 2], random_entity)
    return batch
