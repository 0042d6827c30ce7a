"""Link prediction: filtered ranking metrics (Bordes et al. 2013) and two training recipes for the relation scorers
of shared.nn.relation_scoring.

Filtered ranking: the true tail t of (h, r, t) is ranked among all entities after every *other* known true tail of
(h, r) is removed (and the same for heads); ties count half (the mean of the optimistic and pessimistic ranks), so a
constant model gets the random-ranking rank, not rank 1. Known triples are integer codes, and a batch's filter is one
`torch.isin` of its (B, n_entities) candidate codes, so no Python loop runs per triple.

Recipes: `train_margin` is the paper's (margin ranking loss against uniformly corrupted heads or tails, AdaGrad,
entity vectors projected to unit norm after each step); `train_1n` is the later "1-N" recipe (Dettmers et al. 2018:
every (h, r) and (r, t) query scores all entities, binary cross-entropy against all known answers, Adam) under which
the published small-graph DistMult numbers were obtained.
"""
import torch
from torch.nn import functional as F

from shared.nn.relation_scoring import corrupt, margin_ranking_loss
from shared.train.loop import fit

HITS_AT = (1, 3, 10)


def triple_codes(triples, n_entities, n_relations, direction):
    """int64 codes of known triples: ((h R + r) N + t) for direction 'tail', ((t R + r) N + h) for 'head'."""
    h, r, t = triples.unbind(-1)
    anchor, answer = (h, t) if direction == "tail" else (t, h)
    return (anchor * n_relations + r) * n_entities + answer


@torch.no_grad()
def filtered_ranks(model, triples, known, n_entities, n_relations, batch_size=256):
    """{'tail': (N,), 'head': (N,)} float ranks of `triples` (N, 3); `known` (M, 3) are every true triple to filter
    (train + valid + test); the evaluated triples are added to it, so their own answer is never filtered twice."""
    device = model.entity.device
    triples, known = triples.to(device), torch.cat([known.to(device), triples.to(device)])
    ranks = {}
    for direction in ("tail", "head"):
        codes = torch.unique(triple_codes(known, n_entities, n_relations, direction))
        out = []
        for batch in triples.split(batch_size):
            h, r, t = batch.unbind(-1)
            scores = model.score_tails(h, r) if direction == "tail" else model.score_heads(r, t)
            answer, anchor = (t, h) if direction == "tail" else (h, t)
            true = scores.gather(1, answer[:, None])
            candidates = (anchor * n_relations + r)[:, None] * n_entities + torch.arange(n_entities, device=device)
            other = ~torch.isin(candidates, codes)  # true answers are filtered, the evaluated one included
            greater = ((scores > true) & other).sum(1)
            ties = ((scores == true) & other).sum(1)
            out.append(1 + greater + ties / 2)
        ranks[direction] = torch.cat(out).float().cpu()
    return ranks


def rank_metrics(ranks):
    """MRR and Hits@k over both directions together (each triple counted as a tail and as a head query)."""
    every = torch.cat([ranks["tail"], ranks["head"]])
    return {"mrr": (1 / every).mean().item(), **{f"hits@{k}": (every <= k).float().mean().item() for k in HITS_AT}}


def _batches(n, batch_size, generator):
    order = torch.randperm(n, generator=generator)
    return order.split(batch_size)


def _log_epochs(sizes, log):
    """An on_step for epochs of batches of `sizes` examples: log(epoch, the mean loss over its examples) at its end."""
    total = 0.0

    def on_step(step, loss):
        nonlocal total
        total += loss.item() * sizes[step % len(sizes)]
        if (step + 1) % len(sizes) == 0:
            if log:
                log(step // len(sizes), total / sum(sizes))
            total = 0.0
    return on_step


def train_margin(model, train, n_entities, epochs, batch_size, lr, n_negatives, generator, l2=0.0, margin=1.0,
                 renormalise=True, log=None):
    """The paper's recipe; `l2` is the weight of the squared norm of the relation parameters touched by a batch."""
    device = model.entity.device
    train = train.to(device)
    relation_params = [p for name, p in model.named_parameters() if name != "entity"]
    sizes = [len(i) for i in torch.arange(len(train)).split(batch_size)]  # an epoch's batches

    def batches():  # each epoch starts from unit-norm entities, in a fresh order; a batch's negatives after it
        for _ in range(epochs):
            if renormalise:
                model.renormalise_entities()
            for index in _batches(len(train), batch_size, generator):
                batch = train[index.to(device)]
                yield batch, corrupt(batch.cpu(), n_entities, n_negatives, generator).to(device)

    def loss_fn(model, batch_negatives):
        batch, negatives = batch_negatives
        heads = torch.cat([batch[:, None, 0], negatives[..., 0]], 1)
        tails = torch.cat([batch[:, None, 2], negatives[..., 2]], 1)
        scores = model.score_shared_relation(heads, batch[:, 1], tails)
        loss = margin_ranking_loss(scores[:, 0], scores[:, 1:], margin)
        if l2:
            loss = loss + l2 * sum(p.square().sum() for p in relation_params) / len(sizes)
        return loss

    log_epochs = _log_epochs(sizes, log)

    def on_step(step, loss):
        if renormalise:
            model.renormalise_entities()
        log_epochs(step, loss)

    fit(model, batches(), steps=epochs * len(sizes), loss_fn=loss_fn,
        make_optimizer=lambda model: torch.optim.Adagrad(model.parameters(), lr=lr), on_step=on_step)


def train_1n(model, train, n_entities, n_relations, epochs, batch_size, lr, generator, label_smoothing=0.1,
             weight_decay=0.0, log=None):
    """1-N scoring: each distinct (h, r) query (tails) and (r, t) query (heads) against all entities, BCE loss."""
    device = model.entity.device
    queries = []
    for direction in ("tail", "head"):
        codes = triple_codes(train, n_entities, n_relations, direction)
        keys, inverse = torch.unique(torch.div(codes, n_entities, rounding_mode="floor"), return_inverse=True)
        targets = torch.zeros(len(keys), n_entities)
        targets[inverse, codes % n_entities] = 1.0
        queries.append((direction, keys // n_relations, keys % n_relations, targets))
    sizes = [len(i) for _, anchors, _, _ in queries for i in torch.arange(len(anchors)).split(batch_size)]

    def batches():  # each epoch: the tail queries in a fresh order, then the head queries
        for _ in range(epochs):
            for direction, anchors, relations, targets in queries:
                for index in _batches(len(anchors), batch_size, generator):
                    yield direction, anchors[index].to(device), relations[index].to(device), targets[index].to(device)

    def loss_fn(model, batch):
        direction, a, r, y = batch
        logits = model.score_tails(a, r) if direction == "tail" else model.score_heads(r, a)
        y = y * (1 - label_smoothing) + label_smoothing / n_entities
        return F.binary_cross_entropy_with_logits(logits, y)

    fit(model, batches(), steps=epochs * len(sizes), loss_fn=loss_fn,
        make_optimizer=lambda model: torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay),
        on_step=_log_epochs(sizes, log))
