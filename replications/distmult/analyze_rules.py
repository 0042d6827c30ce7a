"""EmbedRule (section 4 of the paper): a length-2 rule B1(a, b) & B2(b, c) => H(a, c) is mined when the composed
relation operators match the head's, ||M_B1 M_B2 - M_H||_F small for multiplicative models (diag(r1 * r2) for
DistMult, which is commutative), ||v_B1 + v_B2 - v_H|| for TransE. Distances are divided by ||M_H|| so that rules of
different heads compare. Candidates: every ordered body pair with H in neither body slot.

On the generated family graph the true rules are known: the rank of each planted body among the bodies of its head,
and whether the model orders an order-sensitive body (sibling_of o parent_of => uncle_of, but parent_of o sibling_of
is parent_of). On Kinships the rules are unknown: each mined rule is scored by its confidence on train + valid,
#{(a, c): H(a, c) and a path B1 B2 from a to c} / #{(a, c): a path B1 B2 from a to c}, against the mean over all
candidates (a random pick) and a path-counting baseline that ranks rules by that support (what AMIE starts from)."""
import numpy as np
import torch

from shared.data.knowledge_graphs import FAMILY_RULES
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import load_graph

ORDER_SENSITIVE = ("uncle_of", "nephew_of")
MODELS = ("distmult", "bilinear", "transe")


def rule_distances(model, unit=False):
    """(R, R, R) float64: relative distance of body (B1, B2) to head H; +inf where H is a body relation. `unit`
    (chosen after seeing results, deviations.md): compare the composed body and the head each scaled to unit norm."""
    ops = model.relation_operators().double()
    if model.kind == "transe":
        composed = ops[:, None, None, :] + ops[None, :, None, :]                      # (B1, B2, 1, d)
        norm = lambda x: torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        if unit:
            composed, ops = composed / norm(composed), ops / norm(ops)
        dist = torch.linalg.vector_norm(composed - ops[None, None], dim=-1) / torch.linalg.vector_norm(ops, dim=-1)
    else:
        composed = torch.einsum("aij,bjk->abik", ops, ops)[:, :, None]                # (B1, B2, 1, d, d)
        norm = lambda x: torch.linalg.matrix_norm(x)[..., None, None]
        if unit:
            composed, ops = composed / norm(composed), ops / norm(ops)
        dist = torch.linalg.matrix_norm(composed - ops[None, None]) / torch.linalg.matrix_norm(ops)
    r = len(ops)
    index = torch.arange(r)
    dist[index, :, index] = float("inf")
    dist[:, index, index] = float("inf")
    return dist


def rank_of(values, target):
    """1 + #(smaller) + #(other ties) / 2 of values[target] among the finite entries of values."""
    finite = values[torch.isfinite(values)]
    v = values[target]
    return 1 + (finite < v).sum().item() + ((finite == v).sum().item() - 1) / 2


def rule_confidence(graph_triples, n_entities, n_relations):
    """(R, R, R) confidence and support of every rule on the given triples (dense adjacency: small graphs only)."""
    adjacency = torch.zeros(n_relations, n_entities, n_entities, dtype=torch.float64)
    adjacency[graph_triples[:, 1], graph_triples[:, 0], graph_triples[:, 2]] = 1.0
    paths = (torch.einsum("aij,bjk->abik", adjacency, adjacency) > 0).double()       # (B1, B2, n, n)
    support = torch.einsum("abik,hik->abh", paths, adjacency)
    body = paths.sum((-1, -2))[:, :, None]
    return torch.where(body > 0, support / body.clamp(min=1), torch.zeros_like(support)), support


def first_run(models, specs, model_name):
    return next(m for n, m in models.items() if specs[n]["model"] == model_name)


def main():
    run = start_run("metrics", "arrays", many=("checkpoints", "data"))
    p = run.params
    (family_ckpt, kin_ckpt), (family_data, kin_data) = run.args.checkpoints, run.args.data
    metrics, arrays, info = {}, {}, {}

    family = load_graph(family_data)
    models, specs, _ = load_models(family_ckpt)
    rel = {name: i for i, name in enumerate(family["relations"])}
    for model_name in MODELS:
        dist = rule_distances(first_run(models, specs, model_name))
        ranks, order_right, gaps, top1 = [], [], [], []
        for head, (b1, b2) in FAMILY_RULES.items():
            h, a, b = rel[head], rel[b1], rel[b2]
            values = dist[:, :, h].reshape(-1)
            ranks.append(rank_of(values, a * len(rel) + b))
            best = values.min()
            top1.append(float(values[a * len(rel) + b] == best) / (values == best).sum().item())
            if head in ORDER_SENSITIVE:
                gaps.append(abs(dist[a, b, h] - dist[b, a, h]).item())
                order_right.append(float(dist[a, b, h] < dist[b, a, h]))
        metrics[f"family_{model_name}_planted_rank_max"] = max(ranks)
        unit = rule_distances(first_run(models, specs, model_name), unit=True)
        metrics[f"family_{model_name}_planted_rank_max_unit"] = max(
            rank_of(unit[:, :, rel[head]].reshape(-1), rel[b1] * len(rel) + rel[b2]) for head, (b1, b2) in FAMILY_RULES.items())
        metrics[f"family_{model_name}_precision_at_1"] = float(np.mean(top1))  # top body is planted, ties shared
        metrics[f"family_{model_name}_order_correct_frac"] = float(np.mean(order_right))
        metrics[f"family_{model_name}_order_gap_max"] = max(gaps)
        metrics[f"family_{model_name}_order_gap_min"] = min(gaps)
        info[f"family_{model_name}_planted_ranks"] = dict(zip(FAMILY_RULES, ranks))

    kin = load_graph(kin_data)
    models, specs, meta = load_models(kin_ckpt)
    known = torch.cat([kin["train"], kin["valid"]])
    confidence, support = rule_confidence(known, kin["n_entities"], kin["n_relations"])
    r = kin["n_relations"]
    candidate = torch.ones(r, r, r, dtype=torch.bool)
    index = torch.arange(r)
    candidate[index, :, index] = candidate[:, index, index] = False
    conf_all = confidence[candidate]
    metrics["kinships_random_rule_conf"] = conf_all.mean().item()
    k, curve = p["top_rules"], p["curve_rules"]
    by_support = conf_all[torch.argsort(-support[candidate], stable=True)]
    metrics["kinships_path_count_top_conf"] = by_support[:k].mean().item()
    arrays["path_count_curve"] = (by_support[:curve].cumsum(0) / torch.arange(1, curve + 1)).numpy()
    arrays["random_conf"] = np.array(metrics["kinships_random_rule_conf"])
    for model_name in MODELS:
        dist = rule_distances(first_run(models, specs, model_name))
        mined = conf_all[torch.argsort(dist[candidate], stable=True)]
        metrics[f"kinships_{model_name}_top_conf"] = mined[:k].mean().item()
        metrics[f"kinships_{model_name}_top_conf_gain"] = mined[:k].mean().item() - metrics["kinships_random_rule_conf"]
        arrays[f"{model_name}_curve"] = (mined[:curve].cumsum(0) / torch.arange(1, curve + 1)).numpy()
        unit = rule_distances(first_run(models, specs, model_name), unit=True)
        metrics[f"kinships_{model_name}_top_conf_unit"] = conf_all[torch.argsort(unit[candidate], stable=True)][:k].mean().item()
    metrics["kinships_distmult_minus_transe_top_conf"] = (metrics["kinships_distmult_top_conf"]
                                                          - metrics["kinships_transe_top_conf"])
    info.update(kinships_candidate_rules=int(candidate.sum()), top_rules=k,
                family_relations=family["relations"], planted_rules=FAMILY_RULES)
    write_metrics(run.args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print({key: round(v, 4) for key, v in metrics.items()})


if __name__ == "__main__":
    main()
