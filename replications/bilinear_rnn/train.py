"""Train every run of one experiment (tasks x seeds x learning rates); write one checkpoint and its history.

Runs with the same task shape and learning rate train stacked in one process (shared.train.stacked), each with its
own seed-fixed init and data stream, so its numbers are those of training it alone.
"""
import time

from common import read_tasks, run_specs, with_task_shape
from model import build, stackable

from shared.io.checkpoints import save_models
from shared.io.files import write_json
from shared.io.runtime import describe, pick_device, seed_everything
from shared.pipeline.provenance import collect
from shared.pipeline.scripts import parse_args
from shared.train.sequences import SeqRun, StepSchedule, train_runs


def main():
    args = parse_args("tasks", "checkpoint", "history")
    p = args.params  # {"experiment", "cfg": the resolved tier config}
    cfg, experiment = p["cfg"], p["experiment"]
    tasks = read_tasks(args.tasks)
    device = pick_device(cfg["device"])
    specs = [with_task_shape(s, tasks[s["task"]]) for s in run_specs(experiment, cfg)]
    steps = cfg["experiments"][experiment]["steps"]

    models, groups = {}, {}
    for spec in specs:
        seed_everything(spec["seed"])  # init depends only on the run's seed
        models[spec["name"]] = build(spec)
        groups.setdefault((spec["vocab"], spec["n_states"], spec["lr"]), []).append(spec)
    history, timings = {}, []
    for (vocab, n_states, lr), members in groups.items():
        schedule = StepSchedule(steps=steps, lr=lr, **cfg["schedule"])
        runs = [SeqRun(s["name"], s["seed"], tasks[s["task"]]) for s in members]
        t0 = time.perf_counter()
        history.update(train_runs({s["name"]: models[s["name"]] for s in members}, runs, schedule, device,
                                  stacked=stackable(members[0])))
        timings.append({"runs": [s["name"] for s in members], "seconds": time.perf_counter() - t0,
                        "stacked": stackable(members[0])})
    wall = sum(t["seconds"] for t in timings)
    tokens = StepSchedule(steps=steps, **cfg["schedule"]).expected_tokens(len(specs))
    meta = {"experiment": experiment, "runs": specs, "device": describe(device), "wall_seconds": wall,
            "groups": timings, "tokens_per_second": tokens / wall, "steps": steps,
            "provenance": collect(config=cfg, seeds=sorted({s["seed"] for s in specs}), device=describe(device))}
    save_models(args.checkpoint, models, meta)
    write_json(args.history, {**meta, "history": history})
    print(f"{experiment}: {len(specs)} runs in {len(groups)} groups, {wall:.1f} s on {describe(device)}")


if __name__ == "__main__":
    main()
