"""Expand an experiment description into named runs: defaults <- experiment keys <- one `vary` entry <- one grid cell.

    {"d_hidden": 512, "vary": [{"name": "relu", "layer": "relu"}, ...], "grid": {"seed": [0, 1], "noise_std": [0, 0.5]}}

`vary` lists alternatives (each may carry a `name`); `grid` is crossed with them. A run's name is the vary name
followed by `key=value` for each grid key, so names stay readable and unique.
"""
import itertools

RESERVED = ("vary", "grid", "name")


def expand_runs(experiment, defaults):
    base = {**defaults, **{k: v for k, v in experiment.items() if k not in RESERVED}}
    variants = experiment.get("vary") or [{}]
    grid = experiment.get("grid") or {}
    keys = list(grid)
    runs = []
    for variant in variants:
        for values in itertools.product(*(grid[k] for k in keys)):
            spec = {**base, **{k: v for k, v in variant.items() if k != "name"}, **dict(zip(keys, values))}
            parts = ([variant["name"]] if "name" in variant else []) + [f"{k}={v}" for k, v in zip(keys, values)]
            spec["name"] = ",".join(parts) or "model"
            runs.append(spec)
    names = [r["name"] for r in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"run names are not unique: {names}")
    return runs
