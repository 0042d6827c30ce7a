"""`replicate benchmarks platform --skip-quick-suite` plans its job (a dry run of the arguments remeasure passes)."""
import pytest

from shared.pipeline.remeasure import SKIP_QUICK_SUITE, run_args
from shared.pipeline.scratch import ROOT, copy_tracked, snakemake


def test_the_platform_benchmark_without_its_quick_suite_plans():
    proc = snakemake(ROOT, "-n", *run_args(2, ["results/benchmarks/platform.json"], SKIP_QUICK_SUITE))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "benchmark" in proc.stdout + proc.stderr


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="lists git's tracked files: needs a git checkout, which "
                    "the platform benchmark's own copy of the tree is not")
def test_the_platform_benchmarks_copy_holds_the_tests(tmp_path):
    """It times `python -m pytest` in its copy: the copy is the tracked tree, tests and README included."""
    repo = copy_tracked(tmp_path / "repo")
    for name in ("tests/papers/test_conformance.py", "conftest.py", "README.md", "replications/distmult/claims.yaml"):
        assert (repo / name).is_file(), name
    assert not (repo / "results").exists()
