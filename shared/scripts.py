"""What every paper's train / analyze scripts need: arguments from the rule, models from a checkpoint, metrics out.

A rule passes `--params '<json>'` (its slice of the config), `--threads N` and one `--<name> <path>` per file.
"""
import argparse
import json

import numpy as np
import torch

from shared.checkpoints import load_state_dicts
from shared.files import atomic_path, write_json


def parse_args(*paths, many=()):
    """--params takes the rule's JSON parameters; `paths` name one-path arguments, `many` several-path ones."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", type=json.loads, default={})
    parser.add_argument("--threads", type=int, default=0)
    for name in paths:
        parser.add_argument(f"--{name}", required=True)
    for name in many:
        parser.add_argument(f"--{name}", nargs="+", required=True)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    return args


def load_models(path, build):
    """{run name: model in eval mode, weights frozen}, {name: run spec} and the metadata of a checkpoint written
    by `shared.checkpoints.save_models` with `meta["runs"]` (safetensors: no pickle is executed)."""
    states, meta = load_state_dicts(path)
    models = {}
    for spec in meta["runs"]:
        model = build(spec)
        model.load_state_dict(states[spec["name"]])
        model.requires_grad_(False)  # analysis only reads the weights
        models[spec["name"]] = model.eval()
    return models, {s["name"]: s for s in meta["runs"]}, meta


def write_metrics(path, metrics, meta=None, info=None, arrays=None, arrays_path=None):
    """The metrics file the report scores claims from, and (optionally) the arrays a figure script draws.

    `meta` (a checkpoint's or history's metadata) adds the experiment, seeds, device and training time to `info`.
    """
    info = dict(info or {})
    if meta is not None:
        info.update(experiment=meta.get("experiment"), seeds=sorted({r["seed"] for r in meta["runs"]}),
                    models=len(meta["runs"]), device=meta.get("device"), train_wall_s=round(meta["wall_seconds"], 1))
    write_json(path, {"metrics": metrics, "skipped": {}, "info": info})
    if arrays is not None:
        with atomic_path(arrays_path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)


def spearman(x, y):
    """Rank correlation; tied values get their average rank."""
    rx, ry = _ranks(np.asarray(x, float)), _ranks(np.asarray(y, float))
    return float(np.corrcoef(rx, ry)[0, 1])


def _ranks(a):
    ranks = np.empty(len(a))
    ranks[a.argsort()] = np.arange(len(a))
    for value in np.unique(a):
        ranks[a == value] = ranks[a == value].mean()
    return ranks
