"""Similarity of eigenvectors of the same rank across seeds (Fig 5A, App F).

Corrected: |cos| in pixel space between seeds' eigenvectors of the same class and rank (most positive first),
over the 10 distinct seed pairs. Paper code: the authors' indexing (`vecs[:, :20]` of ascending eigh = the 20
most negative) and `triu_indices(5, 5)`, which includes the 5 self-pairs (similarity 1) among 15 pairs.
"""
import itertools

import numpy as np
import torch

from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.stats import spearman


def pair_similarity(vecs_by_seed, pairs):
    """Mean over pairs and classes of |cos| per rank: (ranks,)."""
    sims = [analysis.top_eigenvector_similarity(vecs_by_seed[a], vecs_by_seed[b]).mean(0) for a, b in pairs]
    return torch.stack(sims).mean(0).numpy()


def main():
    run = start_run("checkpoint", "metrics", "arrays")
    args = run.args
    models, specs, meta = load_models(args.checkpoint)
    sizes = sorted({s["d_hidden"] for s in specs.values()})
    top = min(args.params["similarity_top"], sizes[0])  # a width-d model has only d eigenvectors
    seeds = sorted({s["seed"] for s in specs.values()})
    corrected, paper_code = [], []
    for d in sizes:
        by_seed_pos, by_seed_neg = [], []
        for seed in seeds:
            name = next(n for n, s in specs.items() if s["d_hidden"] == d and s["seed"] == seed)
            _, signed = models[name].eigen(order="signed")  # most positive first
            by_seed_pos.append(signed[:, :top])
            by_seed_neg.append(signed.flip(1)[:, :top])  # ascending order, as eigh returns it
        distinct = list(itertools.combinations(range(len(seeds)), 2))
        with_self = [(a, b) for a in range(len(seeds)) for b in range(a, len(seeds))]
        corrected.append(pair_similarity(by_seed_pos, distinct))
        paper_code.append(pair_similarity(by_seed_neg, with_self))
    corrected, paper_code = np.stack(corrected), np.stack(paper_code)
    metrics = {
        "top1_corrected_mean": float(corrected[:, 0].mean()),
        "top1_paper_code_mean": float(paper_code[:, 0].mean()),
        "top1_size_spearman": spearman(sizes, corrected[:, 0]),
    }
    for d, c, p in zip(sizes, corrected[:, 0], paper_code[:, 0]):
        metrics[f"top1_corrected_d{d}"], metrics[f"top1_paper_code_d{d}"] = float(c), float(p)
    arrays = {"sizes": np.array(sizes), "corrected": corrected, "paper_code": paper_code}
    write_metrics(args.metrics, metrics, meta, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
