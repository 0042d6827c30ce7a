"""The run contract: what every train / analyze script gets from its rule, and the one checkpoint layout.

A rule runs `python -m replications.<paper>.<script> --params '<json>' --threads N --<name> <path> ...`
(shared.pipeline.paper.step_shell). `start_run` parses that, sets the threads, resolves the device and starts the
clock; `run.seed(base, "noise")` names a seed stream instead of `seed + 1`; `run.save` writes the one checkpoint
metadata schema (runs, device, wall time, training-time provenance) that `load_models` reads for every paper.
"""
import argparse
import hashlib
import importlib
import json
import math
import sys
import time

import numpy as np
import torch

from shared.io.checkpoints import load_state_dicts, save_models
from shared.io.files import atomic_path, write_json
from shared.io.runtime import describe, generator, pick_device
from shared.pipeline.claims import failed_value
from shared.pipeline.provenance import collect, loaded_code

INIT = "init"


def derive_seed(seed, stream):
    """The seed of the named stream of run `seed`. The 'init' stream is the run's seed itself (so a model's init is
    the one `torch.manual_seed(seed)` gives); any other name hashes (seed, name), so two runs' streams never
    coincide the way `seed + 1` of one run and `seed` of the next do."""
    if stream == INIT:
        return int(seed)
    digest = hashlib.sha256(f"{int(seed)}/{stream}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1  # < 2**63: valid for torch, numpy (mod 2**32) and random


class RunContext:
    def __init__(self, args):
        self.args = args
        self.params = args.params
        self.threads = args.threads
        self.device = pick_device(self.params.get("device", "auto")) if isinstance(self.params, dict) else pick_device()
        self.started = time.perf_counter()

    def seed(self, base, stream):
        return derive_seed(base, stream)

    def generator(self, base, stream, device="cpu"):
        """A CPU (by default) torch generator for one named stream: data order and noise do not depend on the device."""
        return generator(derive_seed(base, stream), device)

    def wall(self):
        return time.perf_counter() - self.started

    def meta(self, runs, config=None, wall_seconds=None, **extra):
        """The checkpoint metadata every paper writes: runs (one spec per model, each with `name` and `seed`),
        device, wall time, and the provenance of this training run (commit, config hash, seeds, packages)."""
        seeds = sorted({r["seed"] for r in runs if "seed" in r})
        return {"runs": runs, "device": describe(self.device),
                "wall_seconds": self.wall() if wall_seconds is None else wall_seconds,
                "provenance": collect(config=self.params if config is None else config, seeds=seeds,
                                      device=describe(self.device)),
                "code": loaded_code(), **extra}

    def save(self, path, models, runs, **extra):
        """Write `models` ({name: module}) and the metadata of `runs` to one safetensors checkpoint; return the meta."""
        meta = self.meta(runs, **extra)
        save_models(path, models, meta)
        return meta


def start_run(*paths, many=(), optional=()):
    """Parse the rule's arguments (`paths`: one path each, `many`: one or more, `optional`: may be absent), set the
    thread count and return the RunContext."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", type=json.loads, default={})
    parser.add_argument("--threads", type=int, default=0)
    for name in paths:
        parser.add_argument(f"--{name}", required=True)
    for name in many:
        parser.add_argument(f"--{name}", nargs="+", required=True)
    for name in optional:
        parser.add_argument(f"--{name}", nargs="+", default=[])
    args = parser.parse_args()
    sys.excepthook = _input_errors_without_traceback
    if args.threads:
        torch.set_num_threads(args.threads)
    return RunContext(args)


def _input_errors_without_traceback(kind, error, tb, default=sys.excepthook):
    """Bad input (a prepared file that is not what was asked for, data the paper's protocol refuses) is said in one
    line naming the file; a traceback would bury it. Everything else keeps its traceback."""
    from shared.data.fetch import DataCorrupted, DataRefused, DatasetUnavailable
    if issubclass(kind, (DataCorrupted, DataRefused, DatasetUnavailable)):
        print(f"Invalid input: {error}", file=sys.stderr)
    else:
        default(kind, error, tb)


def load_models(path, build=None):
    """{run name: model in eval mode, weights frozen}, {name: run spec} and the metadata of a checkpoint written by
    `Run.save` (safetensors: no pickle is executed). `build(spec)` makes the untrained model of one run; by default
    the `build` of the calling script's paper (`replications.<paper>.model.build`)."""
    if build is None:
        build = paper_build(sys._getframe(1).f_globals.get("__package__"))
    states, meta = load_state_dicts(path)
    models = {}
    for spec in meta["runs"]:
        model = build(spec)
        model.load_state_dict(states[spec["name"]])
        model.requires_grad_(False)  # analysis only reads the weights
        models[spec["name"]] = model.eval()
    return models, {s["name"]: s for s in meta["runs"]}, meta


def paper_build(package):
    """`build` of the model.py of the paper a package belongs to: paper_build("replications.distmult") and, for a
    script in a part of a paper, paper_build("replications.bilinear_mlp.image") both read the paper's model.py."""
    parts = (package or "").split(".")
    if len(parts) < 2 or parts[0] != "replications":
        raise ValueError("load_models(path) without `build` must be called from a paper's package "
                         "(replications.<paper>.<script>); pass build= elsewhere")
    return importlib.import_module(f"replications.{parts[1]}.model").build


def _explicit(value):
    """A non-finite number becomes an explicit failed value that every claim reading it FAILs on (strict JSON)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return failed_value(f"value is {value}")
    return value


def write_metrics(path, metrics, meta=None, info=None, arrays=None, arrays_path=None, skipped=None):
    """The metrics file the report scores claims from, and (optionally) the arrays a figure script draws.

    `meta` (a checkpoint's metadata) adds the experiment, seeds, device, training time and the training-time
    provenance, which the report shows beside its own. The code this process loaded (and, through `meta`, the code
    that trained the models) is recorded so that a report can tell when its metrics are stale. `skipped`
    ({metric: reason}) names metrics this run cannot measure: claims reading them are NOT RUN with that reason.
    """
    metrics = {key: _explicit(value) for key, value in metrics.items()}
    info = dict(info or {}, code=loaded_code())
    if meta is not None:
        info.update(experiment=meta.get("experiment"), seeds=sorted({r["seed"] for r in meta["runs"] if "seed" in r}),
                    models=len(meta["runs"]), device=meta.get("device"), train_wall_s=round(meta["wall_seconds"], 1))
        if meta.get("provenance"):
            info["trained"] = {k: meta["provenance"].get(k) for k in
                               ("git_commit", "git_dirty", "config_hash", "device", "timestamp_utc")}
            info["trained"]["code"] = meta.get("code", {})
    write_json(path, {"metrics": metrics, "skipped": dict(skipped or {}), "info": info})
    if arrays is not None:
        with atomic_path(arrays_path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)
