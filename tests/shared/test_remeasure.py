"""`replicate benchmarks platform --skip-quick-suite` plans its job (a dry run of the arguments remeasure passes)."""
from shared.pipeline.remeasure import SKIP_QUICK_SUITE, run_args
from shared.pipeline.scratch import ROOT, snakemake


def test_the_platform_benchmark_without_its_quick_suite_plans():
    proc = snakemake(ROOT, "-n", *run_args(2, ["results/benchmarks/platform.json"], SKIP_QUICK_SUITE))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "benchmark" in proc.stdout + proc.stderr
