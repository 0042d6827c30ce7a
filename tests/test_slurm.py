"""The SLURM path for real: one paper's tiny quick tier through `--profile profiles/slurm` on a one-node Slurm
cluster on this machine (.ci/slurm-localhost.sh: munge, slurmctld and slurmd, no accounting), then a job that
fails. The dry runs of tests/papers/test_conformance.py only plan; this submits every non-local job with sbatch.

  * the report renders from jobs that Slurm ran, each asking for what its rule declares (one CPU, the quick tier's
    memory, no GPU) and nothing from a blanket profile default;
  * there is no accounting (sacct has no records), so the run ending at all shows that job states come from squeue;
  * a failing job stops the run with a non-zero exit and its log, promptly (a timeout guards against a hang).

The command is the one README.md shows, plus a short first status check (the plugin's default waits 40 s).
Without a running or startable Slurm (`.ci/run` installs it from Debian where it can) the test skips, saying why.
"""
import csv
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared.io.files import load_yaml
from shared.pipeline.scratch import ROOT, copy_repo, load_scaled, tiny_configfiles

pytestmark = pytest.mark.slow

PAPER = "bilinear_rnn"  # the smallest tiny config: 8 Slurm jobs, 7 local ones
SETUP = ROOT / ".ci" / "slurm-localhost.sh"
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+)")


def _node_up():
    try:
        states = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return bool(re.search(r"^(idle|mixed|allocated)", states, re.M))


@pytest.fixture(scope="module")
def slurm():
    """A Slurm cluster with a node up: one already running, else the one .ci/slurm-localhost.sh starts."""
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="the SLURM executor plugin is not installed "
                        "(pip install -e .[slurm])")
    if not _node_up():
        if not shutil.which("slurmctld"):
            pytest.skip("Slurm is not installed; .ci/slurm-localhost.sh --install (root, Debian) installs and starts "
                        "a one-node cluster, as .ci/run does")
        proc = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines() or ["no output"]
            pytest.skip(f"no Slurm cluster could be started on this machine: {lines[-1]}")
    if not _node_up():
        pytest.skip("Slurm is installed but no node is idle, mixed or allocated (sinfo)")


def run_profile(repo, *extra, timeout):
    """README.md's command for a quick-tier run on CPU nodes, with the paper's tiny config; (process, seconds)."""
    args = [sys.executable, "-m", "snakemake", PAPER, "--profile", "profiles/slurm",
            "--slurm-init-seconds-before-status-checks", "2",
            "--configfile", *[str(repo / Path(f).relative_to(ROOT)) for f in tiny_configfiles(PAPER)],
            "--config", "tier=quick", "accelerator=cpu", *extra]
    start = time.monotonic()
    proc = subprocess.run(args, cwd=repo, capture_output=True, text=True, timeout=timeout)
    return proc, time.monotonic() - start


def slurm_jobs(ids):
    """{id: (state, cpus, min memory, GPUs per node)} of the given jobs, as squeue still shows them."""
    out = subprocess.run(["squeue", "--states=all", "-h", "-o", "%i|%T|%C|%m|%b", "-j", ",".join(ids)],
                         capture_output=True, text=True, check=True).stdout
    return {row[0]: tuple(row[1:]) for row in (line.split("|") for line in out.splitlines())}


def no_accounting():
    if not shutil.which("sacct"):
        return True
    proc = subprocess.run(["sacct", "-X", "-n"], capture_output=True, text=True)
    return proc.returncode != 0 or "disabled" in proc.stdout + proc.stderr


def test_tiny_quick_tier_through_the_slurm_profile(slurm, tmp_path):
    repo = copy_repo(tmp_path / "repo", [PAPER])
    assert load_yaml((repo / "profiles/slurm/config.yaml").read_text())["slurm-status-command"] == "squeue"

    proc, seconds = run_profile(repo, timeout=load_scaled(600))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    report = repo / f"reports/{PAPER}/quick/report.md"
    assert "## Claims" in report.read_text() and "## Provenance" in report.read_text()
    with open(repo / f"reports/{PAPER}/quick/claims.csv") as f:
        assert {row["status"] for row in csv.DictReader(f)} <= {"PASS", "FAIL", "NOT RUN"}

    # every non-local job went through sbatch and ran under Slurm, asking for its rule's resources only
    ids = SUBMITTED.findall(out)
    assert len(ids) == 8, out[-5000:]
    jobs = slurm_jobs(ids)
    assert set(jobs) == set(ids), jobs  # squeue keeps finished jobs for MinJobAge (300 s): all still listed
    for job_id, (state, cpus, memory, gpus) in jobs.items():
        assert (state, cpus, memory, gpus) == ("COMPLETED", "1", "2000M", "N/A"), (job_id, jobs[job_id])
    # with no accounting, sacct knows no job: the run ended, so its status checks were squeue's
    if no_accounting():
        assert "Falling back to 'sacct'" not in out
    print(f"\n{len(ids)} Slurm jobs, {out.count('localrule ')} local; {seconds:.0f} s")

    # a failing job: the run stops with a non-zero exit, names the job and keeps its log; it does not hang
    script = repo / "replications" / PAPER / "analyze_eigen.py"
    script.write_text(script.read_text() + '\nraise SystemExit("deliberate failure (tests/test_slurm.py)")\n')
    proc, seconds = run_profile(repo, "--quiet=host", timeout=load_scaled(300))  # with Snakemake's error block
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-5000:]
    assert "Error in rule bilinear_rnn_analyze" in out and "FAILED" in out, out[-5000:]
    log = repo / f"results/{PAPER}/quick/logs/analyze_eigen.log"
    assert "deliberate failure" in log.read_text()
    failed = SUBMITTED.findall(out)
    assert failed and slurm_jobs(failed)[failed[-1]][0] == "FAILED"
    print(f"failing run: exit {proc.returncode} after {seconds:.0f} s")
