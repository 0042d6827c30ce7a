"""distmult: the Python side of its workflow. See shared/pipeline/paper.py.

One training job per graph (every model and seed of that graph): the registry's graphs (UMLS, Kinships, Nations at
quick; FB15k and WN18 added at full) and the generated family graph. Analyses: link_prediction (filtered MRR and
Hits@k per graph and model, the exact checks) and rules (EmbedRule on the family graph and on Kinships).
"""
from shared.data.knowledge_graphs import entities_unseen_in_training, family_graph, split_triples
from shared.pipeline.config import ConfigError
from shared.pipeline.paper import Analysis, Resources, Step

RESOURCES = {
    "train": Resources(gpu=True, threads=4, mem_mb=16000, runtime=600),
    "analyze": Resources(gpu=True, threads=4, mem_mb=16000, runtime=120),
}
REQUIRED_MODELS = {"kinships": ("distmult", "distmult_1n", "bilinear", "transe"),  # claims and rule mining read them
                   "family": ("distmult", "bilinear", "transe")}


def check(cfg):
    """Every model a graph names has a spec; the graphs the claims read train the models they read."""
    for graph, models in cfg["graphs"].items():
        missing = [m for m in models if m not in cfg["model_specs"]]
        if missing:
            raise ConfigError(f"'graphs.{graph}': {missing} have no entry in model_specs "
                              f"(allowed: {sorted(cfg['model_specs'])})")
    for graph, needed in REQUIRED_MODELS.items():
        absent = [m for m in needed if m not in cfg["graphs"][graph]]
        if absent:
            raise ConfigError(f"'graphs.{graph}': {cfg['graphs'][graph]} lacks {absent}, which the analyses read "
                              f"(allowed: a list containing {list(needed)})")
    for graph, models in cfg["graphs"].items():
        for name in models:
            if cfg["model_specs"][name]["kind"] == "ntn" and cfg["model_specs"][name]["recipe"] != "margin":
                raise ConfigError(f"'model_specs.{name}.recipe': NTN scores every candidate pair one by one; "
                                  f"the 1-N recipe would be too slow (allowed: margin)")


    check_family_split(cfg["family"])


def check_family_split(family):
    """The generated graph's split must leave every entity of valid and test a training triple (the paper ranks only
    entities it trained embeddings for): generated here, as prepare_family will, in well under a second."""
    rows = family_graph(family["families"], family["generations"], tuple(family["children"]), family["seed"])
    splits = split_triples(rows, (family["train_fraction"], (1 - family["train_fraction"]) / 2), family["seed"])
    unseen = entities_unseen_in_training(splits)
    if any(unseen.values()):
        n_entities = len({e for h, _, t in rows for e in (h, t)})
        raise ConfigError(f"'family.train_fraction': {family['train_fraction']} leaves {len(splits['train'])} "
                          f"training triples for {n_entities} entities; {len(unseen['test'])} entities of test and "
                          f"{len(unseen['valid'])} of valid never occur in training, so their embeddings would be "
                          f"untrained (allowed: a fraction whose training triples name every entity)")


def data_path(paper, graph):
    if graph == "family":
        return paper.out("data/family.safetensors")
    return f"data/prepared/{graph}.safetensors"


def checkpoint_path(paper, graph):
    return paper.model_files(graph)["checkpoint"]


def steps(paper):
    cfg = paper.cfg
    return [
        Step("family_data", script="prepare_family", outputs={"out": data_path(paper, "family")}, params=cfg["family"]),
        Step("train", script="train", priority=1, wildcards={"graph": "|".join(cfg["graphs"])},
             inputs={"data": lambda w: data_path(paper, w.graph)},
             outputs=paper.model_files("{graph}"),
             # this graph's slice of the config: editing another graph's models does not retrain it
             params=lambda w: {"graph": w.graph, "models": cfg["graphs"][w.graph],
                               "model_specs": {m: cfg["model_specs"][m] for m in cfg["graphs"][w.graph]},
                               **{k: cfg[k] for k in ("device", "seeds", "margin", "one_n")}}),
    ]


def analyses(paper):
    cfg = paper.cfg
    graphs = list(cfg["graphs"])
    reads = {"checkpoints": [checkpoint_path(paper, g) for g in graphs], "data": [data_path(paper, g) for g in graphs]}
    return [
        Analysis("link_prediction", script="analyze_link_prediction", reads=reads,
                 params={"graphs": graphs, "tier": cfg["tier"], **cfg["analysis"]}, figures=("mrr",)),
        Analysis("rules", script="analyze_rules",
                 reads={"checkpoints": [checkpoint_path(paper, g) for g in ("family", "kinships")],
                        "data": [data_path(paper, g) for g in ("family", "kinships")]},
                 params=cfg["analysis"], figures=("rules",)),
    ]
