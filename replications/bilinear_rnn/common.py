"""What this paper's scripts share: run specs from the config, the task file, and the trained models."""
import json

import torch
from safetensors.torch import load_file, safe_open

from shared.data.sequence_tasks import Task


def run_specs(experiment, cfg):
    """One spec per (task, seed, learning rate) of an experiment: everything `model.build` and training need.
    `cfg` holds `experiments` (at least this one), `lrs` and `d_hidden`; an experiment's own `lrs` replace the tier's."""
    spec = cfg["experiments"][experiment]
    lrs = spec.get("lrs", cfg["lrs"])
    specs = []
    for task in spec["tasks"]:
        for seed in spec["seeds"]:
            for i, lr in enumerate(lrs):
                name = f"{task}_s{seed}" + (f"_lr{i}" if len(lrs) > 1 else "")
                specs.append({"name": name, "task": task, "seed": seed, "lr": lr, "model": spec["model"],
                              "d_hidden": spec.get("d_hidden", cfg["d_hidden"]),
                              **{k: spec[k] for k in ("rank", "block", "additive", "layers") if k in spec}})
    return specs


def read_tasks(path):
    """{task name: Task} from the metadata of the task file prepare_data.py wrote."""
    with safe_open(str(path), framework="pt") as f:
        meta = json.loads(f.metadata()["tasks"])
    return {name: Task(name=name, kind=t["kind"], m=t["m"], table=tuple(map(tuple, t["table"])))
            for name, t in meta.items()}


def read_test_sets(path):
    """{task name: (tokens, states)}: the fixed test sequences of every task."""
    flat = load_file(str(path))
    return {name: (flat[f"{name}/tokens"], flat[f"{name}/states"]) for name in read_tasks(path)}


def with_task_shape(spec, task):
    """The run spec completed with its task's vocabulary and number of states (what model.build needs)."""
    return {**spec, "vocab": task.vocab, "n_states": task.n_states}


def majority_rate(states):
    """Per position, the frequency of the most common state: the accuracy of the best constant guess (chance)."""
    n_states = int(states.max()) + 1
    counts = torch.stack([(states == s).float().mean(0) for s in range(n_states)])
    return counts.max(0).values


def normalize(acc, chance):
    """Chance-normalized accuracy: 0 = the best constant guess, 1 = perfect."""
    return (acc - chance) / (1.0 - chance)
