"""shared.pipeline.scratch.snakemake forks Snakemake from a warm server (shared.pipeline.worker, kind "snakemake"):
the same exit status, output and files as a cold `python -m snakemake`, in the same directory and environment."""
import os
import re
import signal
import subprocess
import time

import pytest

from shared.pipeline import worker
from shared.pipeline.scratch import load_scaled, snakemake

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="tells warm from cold by /proc")

# Snakemake's process records its parent (the server's fork when warm, this test when cold), and prints what a cold
# start would have: directory, arguments, __main__, the environment's bytecode flag and a variable of the test's
SNAKEFILE = """import os, sys
open("parent.txt", "w").write(open(f"/proc/{os.getppid()}/cmdline").read().replace("\\0", " "))
print("parsed in", os.getcwd(), sys.argv[1:], sys.modules["__main__"].__file__, sys.dont_write_bytecode,
      os.environ.get("WARM_PROBE"))

rule all:
    input: "b.txt"

rule a:
    output: "a.txt"
    shell: "echo job $WARM_PROBE > {output}; echo to stderr >&2"

rule b:
    input: "a.txt"
    output: "b.txt"
    shell: "cat {input} > {output}; exit {config[fail_with]}"

rule sleeper:
    shell: "echo $$ > sleeper.pid; exec sleep 600"
"""
# Snakemake's clock times: a job's start and end, its log's name, the elapsed time
STAMP = re.compile(r"\[\w{3} \w{3} +\d+ [\d:]{8} \d{4}\]|\d{4}-\d\d-\d\dT\d{6}\.\d+|\d+:\d\d:\d\d\.\d+")


@pytest.fixture(autouse=True)
def probe(monkeypatch):
    monkeypatch.setenv("WARM_PROBE", "probe")
    return monkeypatch


def run(folder, probe, warm, *args, **kwargs):
    """Snakemake in a fresh copy of the tiny workflow: (completed process, whether it ran warm, the files written)."""
    folder.mkdir()
    (folder / "Snakefile").write_text(SNAKEFILE)
    probe.setenv("REPLICATE_WORKER", "1" if warm else "0")
    proc = snakemake(folder, "--cores", "1", *args, **kwargs)
    ran_warm = "shared.pipeline.worker" in (folder / "parent.txt").read_text()
    return proc, ran_warm, {p.name: p.read_text() for p in folder.glob("*.txt") if p.name != "parent.txt"}


def masked(proc, folder):
    """Exit status, stdout and stderr, but for clock times and the run's folder."""
    return [proc.returncode, *(STAMP.sub("T", text).replace(str(folder), "F") for text in (proc.stdout, proc.stderr))]


@pytest.mark.parametrize("fail_with", [0, 3])
def test_a_warm_snakemake_runs_as_a_cold_one(tmp_path, probe, fail_with):
    config = ("--config", f"fail_with={fail_with}")
    cold, cold_ran_warm, cold_files = run(tmp_path / "cold", probe, False, *config)
    warm, ran_warm, files = run(tmp_path / "warm", probe, True, *config)
    assert not cold_ran_warm and ran_warm
    assert masked(warm, tmp_path / "warm") == masked(cold, tmp_path / "cold"), (warm, cold)
    assert files == cold_files and files["a.txt"] == "job probe\n"
    assert f"parsed in {tmp_path / 'warm'} {['--quiet=host', '--cores', '1', *config]} " in warm.stdout
    assert "snakemake/__main__.py True probe" in warm.stdout  # scratch's PYTHONDONTWRITEBYTECODE=1 reached it
    assert "to stderr" in warm.stderr and "rule b:" in warm.stderr  # a job's, and Snakemake's log
    if fail_with:
        assert warm.returncode == 1 and "Error in rule b" in warm.stderr, warm.stderr
    else:
        assert warm.returncode == 0 and files["b.txt"] == "job probe\n"


def test_a_warm_snakemake_past_its_timeout_is_killed(tmp_path, probe):
    started = time.time()
    with pytest.raises(subprocess.TimeoutExpired) as stop:
        run(tmp_path / "warm", probe, True, "sleeper", timeout=10)
    pid = tmp_path / "warm" / "sleeper.pid"
    if pid.exists():
        os.kill(int(pid.read_text()), signal.SIGKILL)  # its job, left orphaned as a cold run's would be
    assert "shared.pipeline.worker" in (tmp_path / "warm" / "parent.txt").read_text()
    assert time.time() - started < load_scaled(30) and "parsed in" in stop.value.stdout


def test_the_key_ignores_the_running_test_and_tells_kinds_apart():
    env = {"PATH": "/bin", "PYTEST_CURRENT_TEST": "a (call)"}
    assert worker.key(env) == worker.key({**env, "PYTEST_CURRENT_TEST": "b (setup)"})
    assert worker.key(env) != worker.key(env, "snakemake") and worker.key(env) != worker.key({**env, "X": "1"})
