"""The smoke run's step cap (`replicate smoke`, shared/pipeline/smoke.py): every training loop runs its steps through
`capped`, which, only when $REPLICATE_SMOKE_STEPS is set, runs that many steps (the first ones and the very last)
and appends what it measured to $REPLICATE_SMOKE_LOG (one JSON line per loop): the steps the loop was asked for,
wall and CPU seconds a step, the FLOPs of one step (counted by FlopCounterMode on the first step) and the process's
peak memory so far.

Unset (every ordinary run), `capped` returns the steps untouched: the same loop, the same numbers.
"""
import itertools
import json
import os
import resource
import sys
import time

STEPS_VAR = "REPLICATE_SMOKE_STEPS"
LOG_VAR = "REPLICATE_SMOKE_LOG"


def cap():
    """The smoke cap in steps, or None outside a smoke run."""
    value = os.environ.get(STEPS_VAR)
    return int(value) if value else None


def capped(steps, total, loop, count_flops=True):
    """`steps` (an iterable of step indices, e.g. range(total) or a Progress) unchanged outside a smoke run; in one,
    its first cap() - 1 steps and its last, measured and logged under the name `loop`. count_flops=False for a loop
    that FlopCounterMode breaks (its module hooks refuse torch.autograd.grad on leaves)."""
    limit = cap()
    return steps if limit is None else _measured(steps, total, loop, limit, count_flops)


def _measured(steps, total, loop, limit, count_flops):
    from torch.utils.flop_counter import FlopCounterMode  # torch is imported already wherever a loop runs

    flops, times, done, steps, skipped = None, [], 0, iter(steps), _NONE
    try:
        for done, step in enumerate(itertools.islice(steps, limit - 1), 1):
            if done == 1 and count_flops:  # the first step: FLOPs counted (slower, so not timed)
                with FlopCounterMode(display=False) as counter:
                    yield step
                flops = counter.get_total_flops()
            elif done > 1:
                wall, cpu = time.perf_counter(), time.process_time()
                yield step
                times.append((time.perf_counter() - wall, time.process_time() - cpu))
        for skipped in steps:  # drawn, not run: the last one runs below, so that the loop's ending runs too
            pass
    finally:  # logged before the last step: a loop's ending (a final evaluation) may outlast the smoke's time limit
        _log({"loop": loop, "job": _job(), "steps_full": int(total), "steps_run": done + (skipped is not _NONE),
              "flops_per_step": flops,
              "wall_s_per_step": sum(w for w, _ in times) / len(times) if times else None,
              "cpu_s_per_step": sum(c for _, c in times) / len(times) if times else None,
              "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
    if skipped is not _NONE:
        yield skipped


_NONE = object()


def _job():
    """The running job: its module (`python -m replications.<paper>.<script>`) and first output under results/."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    outputs = [arg for arg in sys.argv[1:] if arg.startswith("results/")]
    return " ".join([spec.name if spec else sys.argv[0], *outputs[:1]])


def _log(record):
    path = os.environ.get(LOG_VAR)
    if path:
        with open(path, "a") as f:  # one short line per write: concurrent jobs' lines do not interleave
            f.write(json.dumps(record) + "\n")
