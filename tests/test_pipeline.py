"""The real Snakemake pipeline, run in a temporary copy of the repository with a tiny quick-tier override."""
import csv
from pathlib import Path

import pytest
from snakemake_helpers import (
    assert_rerun_is_no_op_and_figure_edit_does_not_retrain,
    check_claims_exit_code,
    copy_paper_repo,
    run_quick_pipeline,
    snakemake,
)

ROOT = Path(__file__).resolve().parents[1]
TINY = (
    "bilinear_mlp={quick: {boolean: {steps: 50}, experiments: {"
    "base: {epochs: 2}, noise: {epochs: 2}, grid: {epochs: 2, d_hidden: 32}, "
    "size: {epochs: 2, grid: {d_hidden: [8, 16], seed: [0, 1]}}, adversarial: {epochs: 2}, "
    "similarity_task: {epochs: 2}}, "
    "language: {model: {d_model: 16, d_hidden: 32, n_head: 2, n_layer: 2, n_ctx: 16}, "
    "train: {steps: 20, batch_size: 8, eval_every: 10, eval_windows: 8}, timing: {rounds: 1, steps: 1}, "
    "sae: {steps: 5, train_tokens: 2048, batch_size: 64, k: 4}, "
    "analysis: {eval_windows: 16, min_active: 2, ks: [1, 2, 4], candidates: 4, identity_tokens: 32, identity_latents: 4}}}}"
)


def copy_repo(dest):
    return copy_paper_repo(dest, "bilinear_mlp")


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    return run_quick_pipeline(tmp_path_factory.mktemp("repo"), "bilinear_mlp", TINY)


@pytest.mark.slow
def test_quick_pipeline_renders_scored_report(pipeline):
    report = pipeline / "reports" / "bilinear_mlp" / "quick"
    text = (report / "report.md").read_text()
    for section in ("## Claims", "## Figures", "## Deviations from the paper", "## Provenance"):
        assert section in text
    rows = list(csv.DictReader(open(report / "claims.csv")))
    assert len(rows) >= 15
    assert {r["status"] for r in rows} <= {"PASS", "FAIL", "NOT RUN"}
    by_id = {r["id"]: r for r in rows}
    # the identities hold for any trained weights, even after two epochs
    for claim in ("M0-contraction", "M1-symmetric-part", "M2-eigen-sum", "M3-hosvd", "M4-bias-augmentation",
                  "L0-sae-basis-identity", "L0-full-rank-correlation"):
        assert by_id[claim]["status"] == "PASS", by_id[claim]
    assert by_id["A5-fashion-bilinear-vs-reglu"]["status"] == "NOT RUN"
    figures = sorted(p.name for p in (report / "figures").glob("*.png"))
    assert "eigenvectors_spectra.png" in figures and len(figures) == 15
    assert (pipeline / "reports" / "index.md").is_file()
    merged = list(csv.DictReader(open(pipeline / "reports" / "bilinear_mlp" / "claims.csv")))
    assert {"id", "tier", "paper_value", "reproduced", "check", "status"} <= set(merged[0])


@pytest.mark.slow
def test_rerun_is_a_no_op_and_figure_change_does_not_retrain(pipeline):
    assert_rerun_is_no_op_and_figure_edit_does_not_retrain(
        pipeline, TINY, pipeline / "replications" / "bilinear_mlp" / "plot_spectrum.py", ("bilinear_mlp_train", "bilinear_mlp_analyze"))


@pytest.mark.slow
def test_check_claims_exit_code_follows_the_report(pipeline):
    check_claims_exit_code(pipeline, list(csv.DictReader(open(pipeline / "reports" / "bilinear_mlp" / "quick" / "claims.csv"))))


@pytest.mark.parametrize("override, key", [
    ("bilinear_mlp={lr: -0.1}", "lr"),
    ("bilinear_mlp={quick: {experiments: {base: {dataset: cifar10}}}}", "experiments.base.dataset"),
    ("bilinear_mlp={quick: {experiments: {base: {epoch: 3}}}}", "experiments.base"),
])
def test_invalid_config_is_rejected_before_any_job(tmp_path, override, key):
    repo = copy_repo(tmp_path)
    proc = snakemake(repo, "--cores", "1", "--config", override)
    assert proc.returncode != 0
    assert f"invalid config key '{key}" in proc.stdout + proc.stderr
    assert not (repo / "results").exists() and not (repo / "data").exists()


def test_unknown_tier_is_rejected(tmp_path):
    proc = snakemake(copy_repo(tmp_path), "--cores", "1", "--config", "tier=medium")
    assert proc.returncode != 0 and "'tier'" in proc.stdout + proc.stderr and "quick, full" in proc.stdout + proc.stderr


def test_corrupt_download_stops_the_pipeline(tmp_path):
    """A mirror on 127.0.0.1 serves a corrupt MNIST: prepare fails its sha256, the file is gone, nothing trains.
    (TinyStories, which the full tier also needs, has no file on the mirror: --keep-going lets both fail.)"""
    import http.server
    import threading

    mirror = tmp_path / "mirror" / "mnist"
    mirror.mkdir(parents=True)
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        (mirror / name).write_bytes(b"not the real file")
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path / "mirror"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        repo = copy_repo(tmp_path / "repo")
        env = {"REPLICATIONS_MIRROR": f"http://127.0.0.1:{server.server_address[1]}",
               "REPLICATIONS_DATA_DIR": str(repo / "data" / "raw"),
               # the registry's real URLs must fail at once, online or not
               "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "no_proxy": "127.0.0.1"}
        proc = snakemake(repo, "bilinear_mlp", "--cores", "1", "--keep-going", "--config", "tier=full",
                         "bilinear_mlp={full: {datasets: [mnist]}}", env=env)
    finally:
        server.shutdown()
    assert proc.returncode != 0
    assert not list((repo / "data").rglob("*.gz")) and not (repo / "data" / "prepared" / "mnist.safetensors").exists()
    assert not (repo / "results" / "bilinear_mlp" / "full" / "models").exists()
    log = (repo / "logs" / "data" / "mnist.log").read_text()
    assert "sha256" in log and "train-images-idx3-ubyte.gz" in log
    assert "TinyStoriesV2-GPT4-train.txt" in (repo / "logs" / "data" / "tinystories.log").read_text()
    assert not (repo / "results" / "bilinear_mlp" / "full" / "language").exists()


@pytest.mark.slow
def test_snakemake_html_report_captions_every_figure(pipeline):
    proc = snakemake(pipeline, "--cores", "1", "--config", TINY, "--report", "report.html")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    html = (pipeline / "report.html").read_text(errors="replace")
    for caption in (pipeline / "replications" / "bilinear_mlp" / "captions").glob("*.rst"):
        assert caption.read_text().splitlines()[0] in html, caption.name


@pytest.mark.parametrize("profile", ["full", "slurm"])
def test_full_tier_dry_runs_with_each_profile(tmp_path, profile):
    """The paper-scale DAG (all experiments, real downloads) plans cleanly without running anything."""
    repo = copy_repo(tmp_path)
    proc = snakemake(repo, "-n", "--profile", f"profiles/{profile}")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    for experiment in ("base", "base_fashion", "noise", "grid", "size", "adversarial"):
        assert f"results/bilinear_mlp/full/models/{experiment}.safetensors" in out
    assert "data/prepared/mnist.safetensors" in out and "reports/bilinear_mlp/full/report.md" in out
