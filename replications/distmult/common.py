"""What this paper's scripts share: a graph's triples as tensors, and the trained models."""
import json

import torch

from shared.data import read_prepared
from shared.pipeline.run import load_models as load_checkpoint

from .model import build


def load_graph(path):
    """{train, valid, test: int64 (N, 3) tensors, entities, relations: name lists, n_entities, n_relations}."""
    arrays, metadata = read_prepared(path)
    graph = {split: torch.from_numpy(arrays[split]).long() for split in ("train", "valid", "test")}
    graph["entities"], graph["relations"] = json.loads(metadata["entities"]), json.loads(metadata["relations"])
    graph["n_entities"], graph["n_relations"] = len(graph["entities"]), len(graph["relations"])
    return graph


def every_triple(graph):
    return torch.cat([graph["train"], graph["valid"], graph["test"]])


def load_models(path):
    """{run name: model}, {name: run spec} and the checkpoint's metadata (safetensors: no pickle)."""
    return load_checkpoint(path, build)


def add_skipped(metrics_path, skipped):
    """Record metrics that were not measured, each with its reason (the report shows NOT RUN and the reason);
    write_metrics writes an empty `skipped` (NEEDS_SHARED.md)."""
    from shared.io.files import read_json, write_json
    doc = read_json(metrics_path)
    doc["skipped"] = {key: reason for key, reason in skipped.items() if key not in doc["metrics"]}
    write_json(metrics_path, doc)
