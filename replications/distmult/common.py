"""What this paper's scripts share: a graph's triples as tensors, and the trained models."""
import json

import torch

from shared.data import DataRefused, read_prepared
from shared.data.knowledge_graphs import TRIPLE_KEYS, entities_unseen_in_training


def load_graph(path):
    """{train, valid, test: int64 (N, 3) tensors, entities, relations: name lists, n_entities, n_relations}.

    A graph whose valid or test triples name an entity no training triple names is refused: the paper evaluates on
    benchmark splits whose every entity occurs in training, and states no protocol for unseen ones."""
    arrays, metadata = read_prepared(path, keys=TRIPLE_KEYS)
    unseen = entities_unseen_in_training({split: arrays[split].tolist() for split in ("train", "valid", "test")})
    if any(unseen.values()):
        split = "test" if unseen["test"] else "valid"
        raise DataRefused(f"{path}: {len(unseen[split])} entities of its {split} triples never occur in training "
                          f"(ids {unseen[split][:5]}{' ...' if len(unseen[split]) > 5 else ''}); their embeddings "
                          f"would be untrained. Refused: the paper ranks only entities seen in training")
    graph = {split: torch.from_numpy(arrays[split]).long() for split in ("train", "valid", "test")}
    graph["entities"], graph["relations"] = json.loads(metadata["entities"]), json.loads(metadata["relations"])
    graph["n_entities"], graph["n_relations"] = len(graph["entities"]), len(graph["relations"])
    return graph


def every_triple(graph):
    return torch.cat([graph["train"], graph["valid"], graph["test"]])

