"""shared.pipeline.worker: a job forked from the warm server writes what a cold start writes, exits as it does, and
has its cost recorded; the server refuses once a module it imported changed on disk."""
import json
import os
import subprocess
import sys
import time

import pytest

from shared.pipeline import worker
from shared.pipeline.scratch import ROOT, load_scaled

PROBE = """import os, sys
import numpy as np
import torch
torch.manual_seed(0)
print(torch.randn(3).tolist(), np.random.default_rng(0).normal(size=2).tolist(), torch.get_num_threads())
print(__name__, sys.argv[1:], sorted(m for m in sys.modules if m.split(".")[0] in ("shared", "replications")))
parent = open(f"/proc/{os.getppid()}/cmdline").read() if os.path.exists("/proc") else ""
print("WARM" if "shared.pipeline.worker" in parent else "COLD", file=sys.stderr)
sys.exit(int(sys.argv[1]))
"""


def run_job(cwd, name, **env):
    log = cwd / f"{name}.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "REPLICATE_WORKER_IDLE_S": "10", **env}
    proc = subprocess.run([sys.executable, "-m", "shared.pipeline.job", str(log), "--", sys.executable, "-m",
                           "probe_job", "3"], cwd=cwd, env=env, capture_output=True, text=True)
    lines = log.read_text().splitlines()
    return proc.returncode, lines[:-1], lines[-1], json.loads((cwd / f"{name}.log.cost.json").read_text())


@pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="tells warm from cold by /proc")
def test_a_warm_job_writes_and_exits_as_a_cold_one(tmp_path):
    (tmp_path / "probe_job.py").write_text(PROBE)
    status, cold, how, _ = run_job(tmp_path, "cold", REPLICATE_WORKER="0")
    assert status == 3 and how == "COLD" and cold[1] == "__main__ ['3'] []", cold
    run_job(tmp_path, "first")  # no server yet: this one runs cold and starts one
    deadline = time.time() + load_scaled(30)
    while how != "WARM" and time.time() < deadline:
        time.sleep(0.5)
        status, warm, how, cost = run_job(tmp_path, "warm")
    assert how == "WARM", "the warm worker never answered"
    assert status == 3 and warm == cold and cost["exit_status"] == 3 and cost["cpu_s"] >= 0


@pytest.mark.skipif(not os.path.exists("/proc/self/cmdline"), reason="tells warm from cold by /proc")
def test_one_server_serves_jobs_in_other_directories(tmp_path):
    """Each scratch copy of the test suite is its own directory: a job runs in its client's directory, with that
    directory's modules first on sys.path, as a cold `python -m` there would."""
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, marker in ((first, "first"), (second, "second")):
        folder.mkdir()
        record = ("open('server', 'w').write(open(f'/proc/{os.getppid()}/stat').read().split()[3])\n"  # the fork's parent
                  f"print('{marker}', os.getcwd())\nparent = ")
        (folder / "probe_job.py").write_text(PROBE.replace("parent = ", record))
    _, cold, _, _ = run_job(second, "cold", REPLICATE_WORKER="0")
    run_job(first, "first")  # starts a server whose own directory is `first`
    deadline, how = time.time() + load_scaled(30), "COLD"
    while how != "WARM" and time.time() < deadline:
        time.sleep(0.5)
        _, warm, how, _ = run_job(second, "warm")
    assert how == "WARM", "the warm worker never answered"
    assert warm == cold and cold[2] == f"second {second}", (warm, cold)
    assert (second / "server").read_text() == (first / "server").read_text()  # one server for both directories


def test_the_server_sees_a_changed_module_file(tmp_path, monkeypatch):
    module = tmp_path / "stamped_module.py"
    module.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import stamped_module  # noqa: F401

    before = worker.module_files()
    os.utime(module, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert worker.module_files() != before
