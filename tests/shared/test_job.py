"""shared.pipeline.job (a job's log, console lines and cost record), the README timing table built from those
records, shared.pipeline.remeasure's discovery, and the load-scaled hang guard of the pipeline tests."""
import json
import sys

import pytest

from shared.pipeline.config import ConfigError, as_flag
from datetime import UTC, datetime

from shared.pipeline.job import Eta, busy_wall_seconds, progress_fraction, read_costs, run, summarize_costs
from shared.pipeline.remeasure import benchmark_stems
from shared.pipeline.report import timing_table
from shared.pipeline.scratch import load_scaled

SCRIPT = ("import sys, time\nfor i in range(1, 4):\n"
          "    print(f'run 1 of 1, step {i} of 3, loss 0.5', file=sys.stderr, flush=True)\n"
          "    time.sleep(0.3)\nsys.exit(int(sys.argv[1]))\n")


@pytest.mark.parametrize("status", [0, 3])
def test_job_logs_reports_and_records(tmp_path, capsys, status):
    log = tmp_path / "results" / "paper" / "quick" / "logs" / "train_a.log"
    assert run(log, [sys.executable, "-c", SCRIPT, str(status)], interval_s=0.25) == status
    assert "step 3 of 3" in log.read_text()  # the script's output is in its log, not on the console
    console = capsys.readouterr().err
    assert "[paper/quick train_a] started" in console and "ETA" in console
    assert ("FAILED (exit 3)" in console) == bool(status)
    # a failure names its log and shows the log's last lines
    assert (f"last lines of {log}:" in console and "step 3 of 3" in console) == bool(status)
    (record,) = read_costs(log.parent)
    assert record["job"] == "paper/quick train_a" and record["exit_status"] == status
    assert record["wall_s"] >= 0.9 and record["cpu_s"] >= 0 and record["machine"]["cpu_count"] >= 1


def test_progress_fraction_nests_counters():
    assert progress_fraction("run 2 of 8, step 300 of 1000") == (1 + 0.3) / 8
    assert progress_fraction("step 5 of 10") == 0.5
    assert progress_fraction("loading data") is None and progress_fraction("step 0 of 10") is None


def _progress_line(t, label, done, total):
    """A line as shared.train.progress writes it to a log: its UTC stamp (whole seconds), then the counters."""
    return f"{datetime.fromtimestamp(t, UTC):%Y-%m-%dT%H:%M:%SZ} {label}, step {done} of {total}, loss 0.5"


def test_eta_matches_a_job_with_a_known_step_rate():
    """A fake clock drives the real Eta as job.run does (polling the log's last line every 5 s): 40 s of set-up,
    then 3000 steps at 10 steps/s, a progress line after the first step and every 30 s. At every console tick the
    ETA is the true time left, within the lines' one-second stamps; the set-up time does not inflate it."""
    setup, rate, total, start = 40.0, 10.0, 3000, 1_700_000_000
    finish = setup + total / rate
    written = [1] + [int(rate * (t - setup)) for t in range(int(setup) + 30, int(finish), 30)] + [total]
    lines = [(setup + n / rate, _progress_line(start + setup + n / rate, "train", n, total)) for n in written]
    eta, checked = Eta(), 0
    for now in range(0, int(finish), 5):
        seen = [line for t, line in lines if t <= now]
        if seen:
            eta.observe(seen[-1], start + now)
        left = eta.seconds_left(start + now)
        if len(seen) < 2:
            assert left is None, (now, left)  # one line gives no rate: no ETA rather than a wrong one
        elif now % 30 == 0:
            assert abs(left - (finish - now)) <= 1.0, (now, left, finish - now)
            checked += 1
    assert checked >= 8
    assert Eta().text(start) is None


def test_eta_from_a_stale_line_is_none_not_minutes():
    """harmless_perturbations' case: one line 'epoch 1 of 10', written 6 s in and still the last one at the
    60 s tick; the old ETA (elapsed x undone / done) said 9.0 min for a job that ended 18 s later."""
    eta, start = Eta(), 1_700_000_000
    eta.observe(_progress_line(start + 6, "train 8 runs", 1, 10).replace("step", "epoch"), start + 10)
    assert eta.text(start + 60) is None
    eta.observe(_progress_line(start + 66, "train 8 runs", 5, 10).replace("step", "epoch"), start + 70)
    assert eta.text(start + 70) == "ETA 1.2 min"  # 4 epochs in 60 s: 5 more take 75 s, 4 of them gone by


def _record(job, start, wall, cpu, load=0.0):
    return {"job": job, "started_utc": f"2026-12-06T10:{start // 60:02d}:{start % 60:02d}+00:00", "wall_s": wall,
            "cpu_s": cpu, "other_load": load, "exit_status": 0, "machine": {"cpu_count": 2, "cpu_model": "m"}}


def test_busy_wall_counts_overlaps_once_and_skips_gaps():
    records = [_record("a", 0, 60, 60), _record("b", 30, 60, 60), _record("c", 600, 10, 10)]
    assert busy_wall_seconds(records) == 100  # 0-90 and 600-610
    total = summarize_costs(records)
    assert total["jobs"] == 3 and total["cpu_s"] == 130 and total["wall_s"] == 100


def test_timing_table_is_generated_from_reports(tmp_path):
    for paper, load in (("p1", 0.1), ("p2", 1.5)):
        records = [_record("train", 0, 120, 110, load)]
        # as render keeps them: the machine in the summary only
        cost = {"summary": summarize_costs(records), "jobs": [{k: v for k, v in r.items() if k != "machine"}
                                                               for r in records]}
        (tmp_path / paper / "quick").mkdir(parents=True)
        (tmp_path / paper / "quick" / "provenance.json").write_text(json.dumps({"cost": cost}))
    text = timing_table(tmp_path, ["p1", "p2", "p3"])
    assert "on 2 cores, m," in text
    # each job's outside load discounts the other paper's job, which ran at the same time (110 CPU-s in 120 s)
    assert "| `p1` | 1 | 1.8 | 2.0 | 0.00 (max 0.00) |" in text
    assert "| `p2` | 1 | 1.8 | 2.0 | 0.58 (max 0.58) (loaded) |" in text and "no job records" in text
    assert "| **all** | 2 | **3.7** | **2.0** |" in text  # the two ran at the same time


def test_flags_and_guards():
    assert as_flag("k", "false") is False and as_flag("k", True) is True
    with pytest.raises(ConfigError, match="'k'"):
        as_flag("k", "maybe")
    assert load_scaled(10) >= 20
    assert {"platform", "bilinear_rnn"} <= set(benchmark_stems())
