"""Write the generated family graph (shared.data.knowledge_graphs.family_graph: planted composition rules) as a
safetensors file in the layout of a prepared registry graph, split at random into train / valid / test."""
from shared.data import write_safetensors
from shared.data.knowledge_graphs import encode_splits, family_graph, split_triples
from shared.io.files import atomic_path
from shared.pipeline.run import start_run


def main():
    run = start_run("out")
    p = run.params
    rows = family_graph(p["families"], p["generations"], tuple(p["children"]), p["seed"])
    graph = encode_splits(split_triples(rows, (p["train_fraction"], (1 - p["train_fraction"]) / 2), p["seed"]))
    arrays = {k: graph[k] for k in ("train", "valid", "test")}
    metadata = {"dataset": "family (generated)", "entities": graph["entities"], "relations": graph["relations"]}
    with atomic_path(run.args.out) as tmp:
        write_safetensors(arrays, tmp, metadata)
    print({k: v.shape for k, v in arrays.items()})


if __name__ == "__main__":
    main()
