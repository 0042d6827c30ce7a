"""Helpers shared by this paper's scripts: arguments, the prepared data as tensors, models from checkpoints."""
import argparse
import json

import numpy as np
import torch

from model import build
from shared.checkpoints import load_state_dicts
from shared.data import read_prepared
from shared.files import atomic_path, write_json


def parse_args(*paths):
    """--params takes the rule's JSON parameters; `paths` name the one-path arguments the script needs."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", type=json.loads, default={})
    parser.add_argument("--threads", type=int, default=0)
    for name in paths:
        parser.add_argument(f"--{name}", required=True)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    return args


def load_data(path):
    """The file prepare_data.py wrote -> float32 inputs (N, 64) in [0, 1] and int64 labels."""
    arrays, _ = read_prepared(path)
    return {
        "x_train": torch.from_numpy(arrays["x_train"]).float(), "y_train": torch.from_numpy(arrays["y_train"]).long(),
        "x_test": torch.from_numpy(arrays["x_test"]).float(), "y_test": torch.from_numpy(arrays["y_test"]).long(),
    }


def load_models(path):
    """{run name: model in eval mode} and the checkpoint's metadata, from a safetensors checkpoint (no pickle)."""
    states, meta = load_state_dicts(path)
    models = {}
    for spec in meta["runs"]:
        model = build(spec)
        model.load_state_dict(states[spec["name"]])
        model.requires_grad_(False)  # analysis only reads the weights
        models[spec["name"]] = model.eval()
    return models, meta


def write_metrics(path, metrics, info=None, skipped=None, arrays=None, arrays_path=None):
    """The metrics file the report scores claims from, and (optionally) the arrays a figure script draws."""
    write_json(path, {"metrics": metrics, "skipped": skipped or {}, "info": info or {}})
    if arrays is not None:
        with atomic_path(arrays_path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)
