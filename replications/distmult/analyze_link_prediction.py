"""Filtered link prediction metrics per graph and model (mean over seeds), and the exact checks: DistMult's score is
symmetric in head and tail, DistMult equals the full bilinear model with diagonal M_r, the vectorised filtered ranks
equal a Python loop over every candidate; an untrained model as a control. Graphs this tier does not train (FB15k,
WN18 at quick) are recorded as skipped, with the reason."""
import math

import numpy as np
import torch

from shared.nn.relation_scoring import RelationScorer
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.train.link_prediction import filtered_ranks, rank_metrics

from .common import every_triple, load_graph

TABLE2_GRAPHS = ("fb15k", "wn18")
TABLE2_MODELS = ("ntn", "bilinear_linear", "transe", "bilinear", "distmult")
SMALL = ("nations", "umls", "kinships")


def brute_force_ranks(model, triples, known):
    """The definition, one candidate at a time: rank = 1 + #(other candidates scoring higher) + #(ties) / 2, where
    the other candidates are every entity e whose triple (h, r, e) (or (e, r, t)) is not a known true triple."""
    known = {tuple(x) for x in known.tolist()} | {tuple(x) for x in triples.tolist()}
    n = model.entity.shape[0]
    out = {"tail": [], "head": []}
    for h, r, t in triples.tolist():
        for direction, ranks in out.items():
            true = model(torch.tensor([[h, r, t]])).item()
            greater = ties = 0
            for e in range(n):
                candidate = (h, r, e) if direction == "tail" else (e, r, t)
                if candidate in known:
                    continue
                s = model(torch.tensor([candidate])).item()
                greater, ties = greater + (s > true), ties + (s == true)
            ranks.append(1 + greater + ties / 2)
    return {k: torch.tensor(v) for k, v in out.items()}


def random_mrr(graph, triples):
    """Expected MRR of a uniformly random ranking under the filter: a query with m candidates left has E[1/rank] =
    H_m / m."""
    known = {tuple(x) for x in every_triple(graph).tolist()}
    n, values = graph["n_entities"], []
    for h, r, t in triples.tolist():
        for direction in ("tail", "head"):
            m = 1 + sum(((h, r, e) if direction == "tail" else (e, r, t)) not in known for e in range(n))
            values.append(sum(1 / k for k in range(1, m + 1)) / m)
    return float(np.mean(values))


def main():
    run = start_run("metrics", "arrays", many=("checkpoints", "data"))
    p = run.params
    metrics, info, skipped, table = {}, {}, {}, {}
    graphs, metas = {}, {}
    for name, checkpoint, data in zip(p["graphs"], run.args.checkpoints, run.args.data):
        graph, (models, specs, meta) = load_graph(data), load_models(checkpoint)
        graphs[name], metas[name] = (graph, models, specs), meta
        per_model = {}
        for run_name, model in models.items():
            values = rank_metrics(filtered_ranks(model, graph["test"], every_triple(graph), graph["n_entities"],
                                                 graph["n_relations"]))
            per_model.setdefault(specs[run_name]["model"], []).append(values)
        for model_name, values in per_model.items():
            for key in ("mrr", "hits@1", "hits@3", "hits@10"):
                mean = float(np.mean([v[key] for v in values]))
                metrics[f"{name}_{model_name}_{key.replace('@', '')}"] = mean
                table[(name, model_name, key)] = mean
        info[f"{name}_sizes"] = {"entities": graph["n_entities"], "relations": graph["n_relations"],
                                 **{s: len(graph[s]) for s in ("train", "valid", "test")}}
    for name in (*SMALL, *TABLE2_GRAPHS):
        pair = [(a, b) for a, b in (("distmult", "transe"), ("distmult", "bilinear"))]
        for a, b in pair:
            key = f"{name}_{a}_minus_{b}_mrr"
            if f"{name}_{a}_mrr" in metrics and f"{name}_{b}_mrr" in metrics:
                metrics[key] = metrics[f"{name}_{a}_mrr"] - metrics[f"{name}_{b}_mrr"]
    gaps = [metrics[f"{g}_distmult_minus_transe_mrr"] for g in ("umls", "kinships")
            if f"{g}_distmult_minus_transe_mrr" in metrics]
    if len(gaps) == 2:
        metrics["small_distmult_minus_transe_mrr_min"] = min(gaps)
    for name in TABLE2_GRAPHS:
        for model_name in TABLE2_MODELS:
            for key in ("mrr", "hits10"):
                skipped[f"{name}_{model_name}_{key}"] = (
                    f"{name} is not among this {p['tier']}-tier run's graphs ({', '.join(p['graphs'])}): FB15k "
                    f"and WN18 are full-tier downloads"
                    if name not in graphs else f"{model_name} is not trained on {name} in this config")
        for a, b in (("distmult", "transe"), ("distmult", "bilinear")):
            skipped[f"{name}_{a}_minus_{b}_mrr"] = f"{name} or one of the two models was not trained in this run"
    skipped["fb15k401_pretrained_distmult_hits10"] = (
        "needs FB15k-401 (the 401 most frequent relations, not published as a file) and Google's pre-trained "
        "freebase-vectors-skipgram1000 entity vectors (historical, not fetchable here); not run at any tier")
    skipped["fb15k_embedrule_vs_amie"] = ("AMIE is a Java system and FB15k-401 is unavailable; EmbedRule is "
                                          "checked on the family graph and Kinships instead (rules.json)")

    # Exact checks on Kinships' first DistMult run, in float64.
    graph, models, specs = graphs["kinships"]
    first = lambda model_name: next(m for n, m in models.items() if specs[n]["model"] == model_name)
    distmult = first("distmult").double()
    triples = graph["test"][: p["identity_triples"]]
    swapped = triples[:, [2, 1, 0]]
    metrics["distmult_symmetry_max_abs"] = (distmult(triples) - distmult(swapped)).abs().max().item()
    bilinear = RelationScorer("bilinear", graph["n_entities"], graph["n_relations"], distmult.entity.shape[1]).double()
    with torch.no_grad():
        bilinear.entity.copy_(distmult.entity)
        bilinear.relation.copy_(torch.diag_embed(distmult.relation))
        heads, rels = triples[:, 0], triples[:, 1]
        metrics["distmult_equals_diagonal_bilinear_max_abs"] = max(
            (distmult(triples) - bilinear(triples)).abs().max().item(),
            (distmult.score_tails(heads, rels) - bilinear.score_tails(heads, rels)).abs().max().item())
        sample = graph["test"][: p["brute_force_triples"]]
        fast = filtered_ranks(distmult, sample, every_triple(graph), graph["n_entities"], graph["n_relations"])
        slow = brute_force_ranks(distmult, sample, every_triple(graph))
        metrics["vectorised_minus_brute_force_rank_max_abs"] = max(
            (fast[d].double() - slow[d]).abs().max().item() for d in fast)
    torch.manual_seed(0)
    untrained = RelationScorer("distmult", graph["n_entities"], graph["n_relations"], 100)
    metrics["kinships_untrained_distmult_mrr"] = rank_metrics(filtered_ranks(
        untrained, graph["test"], every_triple(graph), graph["n_entities"], graph["n_relations"]))["mrr"]
    for name in SMALL:
        if name in graphs:
            metrics[f"{name}_random_ranking_mrr"] = random_mrr(graphs[name][0], graphs[name][0]["test"])
    info["identity_dtype"] = "float64"

    names = sorted({g for g, _, _ in table})
    model_names = [m for m in ("distmult", "distmult_1n", "distmult_tanh", "bilinear", "bilinear_linear", "linear", "transe", "ntn")
                   if any(k[1] == m for k in table)]
    arrays = {"graphs": np.array(names), "models": np.array(model_names)}
    for key in ("mrr", "hits@10"):
        arrays[key.replace("@", "")] = np.array([[table.get((g, m, key), math.nan) for m in model_names]
                                                  for g in names])
    write_metrics(run.args.metrics, metrics, metas["kinships"], info=info, arrays=arrays, arrays_path=run.args.arrays,
                  skipped={key: reason for key, reason in skipped.items() if key not in metrics})
    print({k: round(v, 4) for k, v in metrics.items()})


if __name__ == "__main__":
    main()
