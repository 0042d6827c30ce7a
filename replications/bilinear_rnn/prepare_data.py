"""The data stage: every task's automaton and its fixed test sequences, in one safetensors file.

Training draws fresh sequences from the same automata (train.py); the tables travel in this file's metadata, so
training and evaluation always agree on them. Test sequences come from their own seed (config `test.seed`), one
stream per task (`run.generator(test.seed, "test/<task>")`), so adding a task does not change another task's
test set.
"""
import json

from safetensors.torch import save_file

from shared.data.sequence_tasks import is_commutative, parse_task, sample
from shared.io.files import atomic_path
from shared.pipeline.run import start_run


def main():
    run = start_run("out")
    args, p = run.args, run.params  # {"tasks": [...], "fsm_seed", "test": {...}}
    tensors, meta = {}, {}
    for name in p["tasks"]:
        task = parse_task(name, p["fsm_seed"])
        gen = run.generator(p["test"]["seed"], f"test/{name}")
        tokens, states = sample(task, p["test"]["sequences"], p["test"]["length"], gen)
        tensors[f"{name}/tokens"], tensors[f"{name}/states"] = tokens, states
        meta[name] = {"kind": task.kind, "m": task.m, "table": [list(row) for row in task.table],
                      "commutative": is_commutative(task.table)}
        print(f"{name}: {task.vocab} tokens, {task.m} states, commutative={meta[name]['commutative']}")
    with atomic_path(args.out) as tmp:
        save_file(tensors, str(tmp), metadata={"tasks": json.dumps(meta, sort_keys=True), "test": json.dumps(p["test"])})


if __name__ == "__main__":
    main()
