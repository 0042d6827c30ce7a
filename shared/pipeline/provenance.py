"""Provenance: enough about code, config and machine to tell later where a number came from."""
import hashlib
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from shared.pipeline.tiers import config_hash

PACKAGES = ("torch", "numpy", "snakemake", "safetensors", "matplotlib")
REPO_ROOT = Path(__file__).resolve().parents[1]
CODE_ROOT = Path(__file__).resolve().parents[2]  # the repository: shared/ and replications/ live here
CODE_DIRS = ("shared", "replications")


def file_hash(path):
    """Short sha256 of a file's bytes, or None when it does not exist."""
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else None


def loaded_code():
    """{repository-relative path: hash} of every module of shared/ and replications/ this process imported: the code
    that produced what it writes (a training script records it in the checkpoint, an analysis in its metrics)."""
    files = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not path or not path.endswith(".py"):
            continue
        try:
            rel = Path(path).resolve().relative_to(CODE_ROOT)
        except ValueError:
            continue
        if rel.parts[0] in CODE_DIRS:
            files[rel.as_posix()] = file_hash(CODE_ROOT / rel)
    return dict(sorted(files.items()))


def collect(config=None, seeds=None, device=None, extra=None):
    """Return a JSON-ready dict; every probe that can fail (git, metadata) degrades to None."""
    commit = _git("rev-parse", "HEAD")
    # reports/ is what the pipeline writes: a re-render must not mark its own inputs as modified
    status = _git("status", "--porcelain", "--", ".", ":(exclude)reports")
    return {
        "git_commit": commit,
        "git_dirty": None if status is None else bool(status),
        "config_hash": config_hash(config) if config is not None else None,
        "seeds": seeds,
        "device": device,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "packages": _package_versions(),
        "timestamp_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "extra": extra or {},
    }


def _git(*args):
    """Output of a git command in the repository, or None (no git, no repo, no commit yet)."""
    try:
        done = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _package_versions():
    # Read installed metadata instead of importing: importing torch costs seconds.
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return versions

