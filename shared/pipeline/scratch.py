"""Real Snakemake runs in a scratch copy of the repository, for the conformance tests and the platform benchmarks.

A copy holds the Snakefile, shared/, profiles/ and only the papers asked for (plus the papers they need), so the
real results/ and reports/ are never touched. Each paper keeps its smallest config in tests/tiny.yaml, keyed by
its name (`<paper>: {quick: {...}}`), passed as a --configfile.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from shared.io.files import load_yaml
from shared.pipeline import worker

ROOT = Path(__file__).resolve().parents[2]
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".pytest_cache")


def needs(paper, root=ROOT):
    """The papers `paper` reads outputs of (its pipeline.py's NEEDS), transitively, read from the source so that
    nothing is imported."""
    found, todo = [], [paper]
    while todo:
        p = todo.pop()
        if p in found:
            continue
        found.append(p)
        source = (Path(root) / "replications" / p / "pipeline.py").read_text()
        match = re.search(r"^NEEDS\s*=\s*\(([^)]*)\)", source, re.M)
        if match:
            todo.extend(re.findall(r"[\"']([a-z0-9_]+)[\"']", match.group(1)))
    return found


def copy_repo(dest, papers, root=ROOT):
    """Copy the workflow and the papers named (with what they need) to `dest`; return `dest`."""
    dest, root = Path(dest), Path(root)
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "pyproject.toml"):
        shutil.copy2(root / name, dest / name)
    for name in ("shared", "profiles"):
        shutil.copytree(root / name, dest / name, ignore=IGNORE, dirs_exist_ok=True)
    (dest / "replications").mkdir(exist_ok=True)
    shutil.copy2(root / "replications" / "__init__.py", dest / "replications" / "__init__.py")
    for paper in {p for paper in papers for p in needs(paper, root)}:
        shutil.copytree(root / "replications" / paper, dest / "replications" / paper, ignore=IGNORE,
                        dirs_exist_ok=True)
    return dest


def copy_tracked(dest, root=ROOT):
    """Copy every file git tracks (the working tree's version) to `dest`, as a fresh clone would hold them; return
    `dest`. For what needs the whole repository, e.g. the test suite the platform benchmark times."""
    dest, root = Path(dest), Path(root)
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        if (root / name).is_file():  # a tracked file deleted in the working tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, dest / name)
    return dest


def tiny_configfiles(paper, root=ROOT):
    """The tiny.yaml of the paper and of every paper it needs."""
    files = [Path(root) / "replications" / p / "tests" / "tiny.yaml" for p in needs(paper, root)]
    return [str(f) for f in files if f.is_file()]


def tiny_config(paper, root=ROOT):
    """The merged tiny overrides, as the `config` mapping Snakemake sees."""
    merged = {}
    for f in tiny_configfiles(paper, root):
        merged.update(load_yaml(Path(f).read_text()) or {})
    return merged


def load_scaled(seconds):
    """A hang guard for a test that runs a pipeline: `seconds` on an idle machine, stretched by how many times over
    the machine's cores are busy now (1-minute load average), so that a busy machine slows the test, not fails it."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return seconds * max(1.0, load / (os.cpu_count() or 1)) * 2


def snakemake(cwd, *args, timeout=None, rule_blocks=True):
    """`python -m snakemake ARGS` in `cwd` with this interpreter; the completed process (output captured). No
    wall-clock limit unless given: tests run tiny configs, and a busy machine must slow them, not fail them.
    `rule_blocks`: print Snakemake's block for each job (which planned_rules reads), which profiles/default hides."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    # first, and in its `=` form: after a `--` it would be a target, and a bare `--quiet host` takes what follows
    shown = ["--quiet=host"] if rule_blocks and not any(a.startswith("--quiet") for a in args) else []
    command = [sys.executable, "-m", "snakemake", *shown, *args]
    # forked from a server that has Snakemake imported (about 1 CPU-s less a run, shared.pipeline.worker), or cold
    return (worker.captured(command, cwd, env, timeout)
            or subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout))


def planned_rules(output):
    """The rule names a Snakemake run or dry run printed as jobs (`rule <name>:` lines)."""
    return set(re.findall(r"^(?:local)?rule (\w+):", output, re.M))


def render_tiny(dest, paper, root=ROOT, cores=2):
    """Copy, then run the paper's quick tier with its tiny overrides; return (copy, completed process)."""
    repo = copy_repo(dest, [paper], root)
    args = ["--cores", str(cores), paper]
    files = tiny_configfiles(paper, root)
    if files:
        args += ["--configfile", *files]
    return repo, snakemake(repo, *args)
