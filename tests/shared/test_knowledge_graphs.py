"""Knowledge-graph data: the registry's small graphs from the pykeen wheel, the archive loader, the family graph."""
import importlib.util
import io
import json
import tarfile

import numpy as np
import pytest

from shared.data import REGISTRY, load
from shared.data.knowledge_graphs import (
    FAMILY_RULES,
    encode_splits,
    family_graph,
    load_triple_files,
    split_triples,
    triple_archive_loader,
)

SIZES = {"umls": (135, 46, 5216, 652, 661), "kinships": (104, 25, 8544, 1068, 1074),
         "nations": (14, 55, 1592, 199, 201)}


@pytest.mark.skipif(importlib.util.find_spec("pykeen") is None, reason="pykeen (envs/requirements.lock) not installed")
@pytest.mark.parametrize("name", sorted(SIZES))
def test_small_graphs_load_verified_from_the_wheel(name, tmp_path):
    graph = load(name, cache_dir=tmp_path)  # an empty cache: the wheel's files must verify
    entities, relations, *counts = SIZES[name]
    assert (len(json.loads(graph["entities"])), len(json.loads(graph["relations"]))) == (entities, relations)
    assert [len(graph[s]) for s in ("train", "valid", "test")] == counts
    assert all(graph[s].dtype == np.int64 and graph[s].shape[1] == 3 for s in ("train", "valid", "test"))
    assert {s["sha256"] for s in graph["sources"].values()} == {f.sha256 for f in REGISTRY[name].files.values()}


def test_full_tier_graphs_are_unpinned_archives():
    for name in ("fb15k", "wn18"):
        dataset = REGISTRY[name]
        assert dataset.kind == "triples" and dataset.files["archive"].sha256.startswith("UNPINNED")


def test_encode_and_file_loader(tmp_path):
    rows = {"train": [("b", "r", "a"), ("a", "s", "c")], "valid": [("c", "r", "b")], "test": [("a", "r", "d")]}
    paths = {}
    for split, split_rows in rows.items():
        paths[split] = tmp_path / f"{split}.txt"
        paths[split].write_text("".join("\t".join(row) + "\n" for row in split_rows))
    graph = load_triple_files(paths)
    assert json.loads(graph["entities"]) == ["a", "b", "c", "d"] and json.loads(graph["relations"]) == ["r", "s"]
    assert graph["train"].tolist() == [[1, 0, 0], [0, 1, 2]] and graph["test"].tolist() == [[0, 0, 3]]
    paths["train"].write_text("a\tr\n")
    with pytest.raises(ValueError, match="line 1"):
        load_triple_files(paths)


def test_archive_loader(tmp_path):
    archive = tmp_path / "g.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        for split in ("train", "valid", "test"):
            data = f"x\tr\t{split}\n".encode()
            info = tarfile.TarInfo(f"G/{split}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    graph = triple_archive_loader({s: f"G/{s}.txt" for s in ("train", "valid", "test")})({"archive": archive})
    assert json.loads(graph["entities"]) == ["test", "train", "valid", "x"]
    assert graph["valid"].tolist() == [[3, 0, 2]]


def test_family_graph_rules_are_exact():
    rows = family_graph(3, 4, (2, 3), seed=0)
    facts = {}
    for h, r, t in rows:
        facts.setdefault(r, set()).add((h, t))
    for head, (b1, b2) in FAMILY_RULES.items():
        composed = {(a, c) for a, b in facts[b1] for b_, c in facts[b2] if b == b_ and a != c}
        assert composed == facts[head], head
    # the order matters for uncle_of: the reversed body is parent_of, not uncle_of
    reversed_body = {(a, c) for a, b in facts["parent_of"] for b_, c in facts["sibling_of"] if b == b_}
    assert reversed_body <= facts["parent_of"] and not reversed_body & facts["uncle_of"]
    splits = split_triples(rows, (0.8, 0.1), seed=0)
    assert sum(map(len, splits.values())) == len(rows)
    assert encode_splits(splits)["train"].shape == (int(0.8 * len(rows)), 3)
    assert family_graph(3, 4, (2, 3), seed=0) == rows
