"""Stable reruns: the same code and the same kept results render byte-identical Markdown wherever they are rendered
and whatever Python's hash seed (the order of a set or of a dict built from one), apart from the render time and
the commit. Every paper's committed quick report is re-rendered (shared.pipeline.report rerender) in two scratch
folders under two hash seeds, then the index over them; the two sets of Markdown must be equal."""
import os
import re
import shutil
import subprocess
import sys

from shared.pipeline.scratch import ROOT

VOLATILE = re.compile(r"^- (Rendered at|Commit:) .*$", re.M)
RENDER_ALL = """
import sys
from pathlib import Path
from shared.pipeline.report import index, rerender
reports = Path(sys.argv[1])
for tier in sorted(reports.glob("*/quick")):
    rerender(tier.parent.name, "quick", reports, sys.argv[2])
index(reports, None, sys.argv[2])
"""


def _render(tmp_path, name, hash_seed):
    reports = tmp_path / name / "reports"
    shutil.copytree(ROOT / "reports", reports, ignore=shutil.ignore_patterns("full", "*.png", "*.pdf"))
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", RENDER_ALL, str(reports), str(ROOT / "replications")], env=env,
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {p.relative_to(reports).as_posix(): VOLATILE.sub(r"- \1 ...", p.read_text())
            for p in sorted(reports.glob("**/*.md"))}


def test_rerenders_are_byte_identical_across_folders_and_hash_seeds(tmp_path):
    first, second = _render(tmp_path, "a", 1), _render(tmp_path, "b", 2)
    assert len(first) >= 20 and "index.md" in first
    differ = [name for name in first if first[name] != second.get(name)]
    assert not differ, f"these reports differ between two renders of the same results: {differ}"
