"""Train every run of one experiment (tasks x seeds x learning rates); write one checkpoint and its history.

Runs with the same task shape train stacked in one process (shared.train.stacked), each with its
own seed-fixed init and data stream, so its numbers are those of training it alone.
"""
import time

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.sequences import SeqRun, StepSchedule, train_runs

from .common import read_tasks, run_specs, with_task_shape
from .model import build, stackable


def main():
    run = start_run("tasks", "checkpoint", "history")
    p = run.params  # {"experiment", "device", "d_hidden", "lrs", "schedule", "experiments": {experiment: ...}}
    experiment = p["experiment"]
    tasks = read_tasks(run.args.tasks)
    specs = [with_task_shape(s, tasks[s["task"]]) for s in run_specs(experiment, p)]
    steps = p["experiments"][experiment]["steps"]

    models, groups = {}, {}
    for spec in specs:
        seed_everything(spec["seed"])  # init depends only on the run's seed
        models[spec["name"]] = build(spec)
        # the learning rates of a sweep share a stack: each run carries its own rate
        groups.setdefault((spec["vocab"], spec["n_states"]), []).append(spec)
    history, timings = {}, []
    for members in groups.values():
        schedule = StepSchedule(steps=steps, lr=members[0]["lr"], **p["schedule"])
        runs = [SeqRun(s["name"], s["seed"], tasks[s["task"]], lr=s["lr"]) for s in members]
        t0 = time.perf_counter()
        history.update(train_runs({s["name"]: models[s["name"]] for s in members}, runs, schedule, run.device,
                                  stacked=stackable(members[0])))
        timings.append({"runs": [s["name"] for s in members], "seconds": time.perf_counter() - t0,
                        "stacked": stackable(members[0])})
    train_seconds = sum(t["seconds"] for t in timings)
    tokens = StepSchedule(steps=steps, **p["schedule"]).expected_tokens(len(specs))
    meta = run.save(run.args.checkpoint, models, specs, experiment=experiment, groups=timings,
                    tokens_per_second=tokens / train_seconds, steps=steps)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{experiment}: {len(specs)} runs in {len(groups)} groups, {train_seconds:.1f} s training "
          f"({meta['wall_seconds']:.1f} s in all) on {meta['device']}")


if __name__ == "__main__":
    main()
