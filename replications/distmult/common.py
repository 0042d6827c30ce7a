"""What this paper's scripts share: a graph's triples as tensors, and the trained models."""
import json

import torch

from shared.data import read_prepared


def load_graph(path):
    """{train, valid, test: int64 (N, 3) tensors, entities, relations: name lists, n_entities, n_relations}."""
    arrays, metadata = read_prepared(path)
    graph = {split: torch.from_numpy(arrays[split]).long() for split in ("train", "valid", "test")}
    graph["entities"], graph["relations"] = json.loads(metadata["entities"]), json.loads(metadata["relations"])
    graph["n_entities"], graph["n_relations"] = len(graph["entities"]), len(graph["relations"])
    return graph


def every_triple(graph):
    return torch.cat([graph["train"], graph["valid"], graph["test"]])

