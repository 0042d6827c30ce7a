"""Run one pipeline job: its output to its log, a line on the console now and then, and a record of what it cost.

Every script step runs as `python -m shared.pipeline.job LOG -- python -m <script> ...` (paper.step_shell). The
script's stdout and stderr go to LOG, as before. The console (Snakemake's stderr) gets a line when the job starts,
one every CONSOLE_INTERVAL_S while it runs (its elapsed time, the last progress line of the log, and an ETA once two
"step i of n" lines give a rate), and one when it ends with its cost; a failed job's line names the log and is
followed by the log's last lines. LOG.cost.json records the wall and CPU seconds, the threads, the machine and its
load, from which the report and the README's timing table are generated, never typed.

    python -m shared.pipeline.job LOG [--label NAME] [--interval S] -- COMMAND ...
"""
import argparse
import json
import os
import platform
import re
import resource
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from shared.io.files import write_json
from shared.pipeline import worker

CONSOLE_INTERVAL_S = float(os.environ.get("REPLICATE_CONSOLE_INTERVAL_S", 60))
POLL_S = 5.0  # how often the log is read for progress; the ETA's rate is timed to within this where lines carry no stamp
FAILED_TAIL_LINES = 15  # a failed job's last log lines shown on the console
STEP = re.compile(r"(\d+) of (\d+)")
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) ")  # shared.train.progress's plain lines start so


def busy_cpu_seconds():
    """CPU-seconds the whole machine has spent busy since boot (Linux /proc/stat), or None elsewhere."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    ticks = [int(f) for f in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def other_load(busy_before, busy_after, own_cpu_s, wall_s):
    """CPU cores the rest of the machine used over `wall_s`: its busy CPU-seconds (busy_cpu_seconds before and
    after) less our own, or None where /proc/stat is not there."""
    if busy_before is None or busy_after is None:
        return None
    return round(max(0.0, busy_after - busy_before - own_cpu_s) / max(wall_s, 1e-9), 2)


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine():
    """What a timing depends on: cores, CPU model, platform, thread settings."""
    threads = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    return {"cpu_count": os.cpu_count(), "cpu_model": cpu_model(), "platform": platform.platform(), **threads}


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def log_tail(log_path, lines=1, tail_bytes=4096):
    """The last `lines` non-empty lines of the log (a tqdm bar's carriage returns split into lines)."""
    try:
        with open(log_path, "rb") as f:
            f.seek(max(0, f.seek(0, 2) - tail_bytes))
            text = f.read().decode(errors="replace").replace("\r", "\n")
    except OSError:
        return []
    return [line[:160] for line in map(str.strip, text.splitlines()) if line][-lines:]


def last_progress(log_path):
    """The last non-empty line of the log (progress lines are the latest thing a trainer writes)."""
    return next(iter(log_tail(log_path)), "")


def progress_fraction(line):
    """The fraction done that the 'i of n' counters of a progress line say ("run 2 of 8, step 300 of 1000": the
    outer counter's finished parts plus the inner one's fraction), or None without counters."""
    fraction = None
    for done, total in reversed([(int(a), int(b)) for a, b in STEP.findall(line)]):
        if not 0 < done <= total:
            return None
        fraction = done / total if fraction is None else (done - 1 + fraction) / total
    return fraction


class Eta:
    """Time left, from the rate between the first and the latest progress line seen. Each line is timed by its own
    stamp where it has one (else when it was first read), so neither the set-up before the first line (imports,
    data) nor a line read long after it was written skews the rate; a single line gives no ETA."""

    def __init__(self):
        self.first = self.last = None  # (fraction, time)

    def observe(self, line, now):
        fraction = progress_fraction(line)
        if fraction is None or (self.last and fraction == self.last[0]):
            return
        stamp = STAMP.match(line)
        at = datetime.strptime(stamp[1], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp() if stamp else now
        if self.last is None or fraction < self.last[0]:  # a new phase counts from zero again
            self.first = (fraction, at)
        self.last = (fraction, at)

    def seconds_left(self, now):
        (f0, t0), (f1, t1) = self.first or (0, 0), self.last or (0, 0)
        if f1 <= f0 or t1 <= t0:
            return None
        left = (1 - f1) * (t1 - t0) / (f1 - f0) - (now - t1)
        return left if left >= 0 else None  # overdue: the rate no longer holds, so no guess

    def text(self, now):
        left = self.seconds_left(now)
        return None if left is None else f"ETA {minutes(left)}"


def minutes(seconds):
    return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"


def say(text):
    print(f"{datetime.now(UTC).strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


def run(log, command, label=None, interval_s=CONSOLE_INTERVAL_S):
    """Run `command` with its output in `log`; write `log`.cost.json; return its exit status."""
    log = Path(log)
    label = label or default_label(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    started, busy0, cpu0 = time.time(), busy_cpu_seconds(), children_cpu_seconds()
    load0 = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    say(f"[{label}] started (log: {log})")
    with open(log, "wb") as out:
        # a single-threaded `python -m` job forks from a warm worker that has torch imported, else starts cold
        proc = worker.start(command, out) or subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        # a cancelled job (Ctrl-C, Snakemake or Slurm sending SIGTERM) takes its script down with it
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda signum, frame: (proc.send_signal(signum), sys.exit(128 + signum)))
        eta, said = Eta(), started
        while True:
            try:
                status = proc.wait(timeout=min(POLL_S, interval_s))
                break
            except subprocess.TimeoutExpired:
                now = time.time()
                line = last_progress(log)
                eta.observe(line, now)
                if now - said >= interval_s:
                    said, left = now, eta.text(now)
                    say(f"[{label}] running {minutes(now - started)}" + (f"; {left}" if left else "")
                        + (f"; {line}" if line else ""))
    wall = time.time() - started
    cpu = proc.cpu_s if isinstance(proc, worker.WarmJob) else children_cpu_seconds() - cpu0
    cost = {"job": label, "script": command[2] if command[1:2] == ["-m"] and len(command) > 2 else command[0],
            "exit_status": status,
            "started_utc": datetime.fromtimestamp(started, UTC).isoformat(timespec="seconds"),
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "threads": _threads(command),
            "load_1min_at_start": None if load0 is None else round(load0, 2),
            # CPU the rest of the machine used while this job ran, in cores: 0 on an idle machine
            "other_load": other_load(busy0, busy_cpu_seconds(), cpu, wall),
            "machine": machine()}
    write_cost(log, cost)
    say(f"[{label}] {'done' if status == 0 else f'FAILED (exit {status}), log: {log}'} in {minutes(wall)}, "
        f"CPU {minutes(cpu)}")
    if status != 0:  # the console hides Snakemake's error block (profiles/default), so the log's end is shown here
        show_log_tail(log)
    return status


def show_log_tail(log, lines=FAILED_TAIL_LINES):
    tail = log_tail(log, lines, tail_bytes=16384)
    print("\n".join(f"    {line}" for line in [f"last lines of {log}:", *tail]), file=sys.stderr, flush=True)


def default_label(log):
    """'paper/tier step' for a log at results/<paper>/<tier>/logs/<step>.log, else the log's name."""
    parts = Path(log).parts
    if len(parts) >= 4 and parts[-2] == "logs":
        return f"{parts[-4]}/{parts[-3]} {Path(log).stem}"
    return Path(log).stem


def cost_path(log):
    return Path(f"{log}.cost.json")


def write_cost(log, cost):
    write_json(cost_path(log), cost)


def read_costs(logs_dir):
    """The cost records of the jobs whose logs are in `logs_dir` (the last run of each), sorted by start."""
    records = []
    for path in sorted(Path(logs_dir).glob("*.cost.json")):
        try:
            records.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return sorted(records, key=lambda r: r.get("started_utc", ""))


def busy_wall_seconds(records):
    """Seconds during which at least one of the jobs ran: the union of their intervals. Idle gaps between separate
    invocations do not count, so this is the wall time of running them as they ran (at that parallelism)."""
    spans = sorted((datetime.fromisoformat(r["started_utc"]).timestamp(), r["wall_s"]) for r in records)
    total, end = 0.0, None
    for start, wall in spans:
        stop = start + wall
        if end is None or start > end:
            total, end = total + wall, stop
        elif stop > end:
            total, end = total + stop - end, stop
    return total


def _interval(record):
    start = datetime.fromisoformat(record["started_utc"]).timestamp()
    return start, start + record["wall_s"]


def outside_load(record, workflow):
    """The CPU cores used during `record`'s job by work outside the workflow: its other_load (everything else the
    machine did) less the share of CPU the workflow's other jobs (`workflow`, records) spent in that window."""
    if record.get("other_load") is None:
        return None
    start, end = _interval(record)
    own = 0.0
    for other in workflow:
        if other is record:
            continue
        o_start, o_end = _interval(other)
        overlap = min(end, o_end) - max(start, o_start)
        if overlap > 0 and other["wall_s"] > 0:
            own += other["cpu_s"] * overlap / other["wall_s"]
    return max(0.0, record["other_load"] - own / max(record["wall_s"], 1e-9))


def summarize_costs(records, workflow=None):
    """Totals over job records: jobs, CPU seconds, wall seconds (busy_wall_seconds), the CPU used outside the
    workflow's jobs (`workflow`: every job record of the run, default `records`) at most and on average over the
    jobs' wall time, when, and on what machine (the most common one, with how many jobs ran elsewhere)."""
    if not records:
        return None
    machines = [json.dumps(r.get("machine", {}), sort_keys=True) for r in records]
    common = max(set(machines), key=machines.count)
    loads = [(v, r["wall_s"]) for r in records if (v := outside_load(r, workflow or records)) is not None]
    walls = sum(w for _, w in loads)
    return {"jobs": len(records), "failed": sum(r.get("exit_status") != 0 for r in records),
            "cpu_s": round(sum(r["cpu_s"] for r in records), 1), "wall_s": round(busy_wall_seconds(records), 1),
            "max_other_load": round(max(v for v, _ in loads), 2) if loads else None,
            "mean_other_load": round(sum(v * w for v, w in loads) / walls, 2) if walls else None,
            "first_started_utc": records[0]["started_utc"],
            "machine": json.loads(common), "jobs_on_other_machines": len(machines) - machines.count(common)}


def _threads(command):
    if "--threads" in command:
        i = command.index("--threads")
        if i + 1 < len(command) and command[i + 1].isdigit():
            return int(command[i + 1])
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        raise SystemExit("usage: python -m shared.pipeline.job LOG [--label NAME] [--interval S] -- COMMAND ...")
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="python -m shared.pipeline.job")
    parser.add_argument("log")
    parser.add_argument("--label")
    parser.add_argument("--interval", type=float, default=CONSOLE_INTERVAL_S)
    args = parser.parse_args(argv[:split])
    return run(args.log, argv[split + 1:], args.label, args.interval)


if __name__ == "__main__":
    sys.exit(main())
