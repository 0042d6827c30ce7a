"""Speed of training many small runs stacked (shared.train.stacked: one set of kernels for all) against one after
another, measured in the same process on the same runs, with the trained weights compared. One thread (the
benchmark rule's, as the quick tier trains: one thread per training job).

    snakemake --cores 1 bilinear_rnn_benchmark      (or `snakemake --cores 2 benchmarks`: every paper's)
"""
from shared.data.sequence_tasks import parse_task
from shared.io.files import write_json
from shared.io.runtime import describe, seed_everything
from shared.pipeline.provenance import collect
from shared.pipeline.run import start_run
from shared.train.sequences import SeqRun, StepSchedule, timed, train_runs

from .model import build

STEPS = 300

CASES = [  # (variant spec, task, seeds): the shapes of the quick tier's experiments
    ({"model": "full"}, "modadd5", 8),
    ({"model": "diagonal"}, "parity", 8),
    ({"model": "cp", "rank": 8}, "fsm5", 8),
]


def fresh(spec, task, seeds):
    models = {}
    for seed in range(seeds):
        seed_everything(seed)
        models[f"s{seed}"] = build({**spec, "vocab": task.vocab, "n_states": task.n_states, "d_hidden": 32})
    return models, [SeqRun(f"s{seed}", seed, task) for seed in range(seeds)]


def main():
    run = start_run("out")  # params: {"device"}
    device = run.device
    schedule = StepSchedule(steps=STEPS, progress=False)
    results = []
    for spec, task_name, seeds in CASES:
        task = parse_task(task_name)
        timed(train_runs, *fresh(spec, task, 2), StepSchedule(steps=20, progress=False), device, device=device)  # warm-up
        one_by_one, _ = fresh(spec, task, seeds)
        stacked, runs = fresh(spec, task, seeds)
        _, t_seq = timed(train_runs, one_by_one, runs, schedule, device, stacked=False, device=device)
        _, t_stack = timed(train_runs, stacked, runs, schedule, device, stacked=True, device=device)
        diff = max((a - b).abs().max().item() for name in stacked
                   for a, b in zip(stacked[name].state_dict().values(), one_by_one[name].state_dict().values()))
        results.append({"variant": spec, "task": task_name, "runs": seeds, "steps": STEPS,
                        "sequential_s": round(t_seq, 3), "stacked_s": round(t_stack, 3),
                        "speedup": round(t_seq / t_stack, 2), "max_abs_weight_diff": diff,
                        "stacked_tokens_per_s": round(schedule.expected_tokens(seeds) / t_stack)})
        print(results[-1])
    write_json(run.args.out, {
        "what": "training the same runs one after another vs stacked in one vmap'd model, same process",
        "cases": results, "speedup_min": min(r["speedup"] for r in results),
        "device": describe(device), "provenance": collect(device=describe(device)),
    })


if __name__ == "__main__":
    main()
