"""bilinear_mlp's workflow: what its tiny quick tier must show (the conformance suite, tests/papers/, checks what
every paper shares: rerun no-op, figure edit, model edit, check-claims, dry runs), its declarations in
pipeline.py and a corrupt download stopping it. The config errors it raises before any job are data
(tests/bad_config.yaml, run by tests/papers/test_paper_configs.py)."""
import csv
from pathlib import Path

import pytest

from replications.bilinear_mlp import pipeline
from shared.pipeline.paper import Paper
from shared.pipeline.scratch import copy_repo, snakemake, tiny_config, tiny_configfiles

ROOT = Path(__file__).resolve().parents[3]
PAPER = "bilinear_mlp"


def paper(tier="quick", overrides=None):
    return Paper(PAPER, tier, overrides, root=ROOT)


# ---------------------------------------------------------------- the tiny quick tier
@pytest.mark.slow
def test_tiny_report_scores_the_exact_identities(tiny_render):
    report = tiny_render(PAPER) / "reports" / PAPER / "quick"
    text = (report / "report.md").read_text()
    for section in ("## Claims", "## Figures", "## Deviations from the paper", "## Provenance"):
        assert section in text
    rows = list(csv.DictReader(open(report / "claims.csv")))
    assert len(rows) >= 15 and {r["status"] for r in rows} <= {"PASS", "FAIL", "NOT RUN"}
    by_id = {r["id"]: r for r in rows}
    # the identities hold for any trained weights, even after two epochs
    for claim in ("M0-contraction", "M1-symmetric-part", "M2-eigen-sum", "M3-hosvd", "M4-bias-augmentation",
                  "L0-sae-basis-identity", "L0-full-rank-correlation"):
        assert by_id[claim]["status"] == "PASS", by_id[claim]
    assert by_id["A5-fashion-bilinear-vs-reglu"]["status"] == "NOT RUN"  # Fashion-MNIST is not in the quick tier
    figures = sorted(p.name for p in (report / "figures").glob("*.png"))
    tiny = Paper(PAPER, "quick", tiny_config(PAPER)[PAPER], root=tiny_render(PAPER))  # tiny.yaml drops experiments
    assert figures == sorted(f.split("/")[-1] for f in tiny.figures())
    assert "eigenvectors--spectra.png" in figures and "gates--boolean.png" in figures
    for ns in tiny.skipped:  # a dropped experiment's analyses are NOT RUN, not FAILs
        assert all(r["status"] == "NOT RUN" for r in rows if r["metric"].split(".")[0] == ns)


@pytest.mark.slow
def test_snakemake_html_report_captions_every_figure(tiny_render):
    repo = tiny_render(PAPER)
    proc = snakemake(repo, "--cores", "1", PAPER, "--configfile", *tiny_configfiles(PAPER), "--report", "report.html")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    html = (repo / "report.html").read_text(errors="replace")
    drawn = {p.name.split("--")[0] for p in (repo / "reports" / PAPER / "quick" / "figures").glob("*.png")}
    for caption in (repo / "replications" / PAPER / "captions").glob("*.rst"):
        if caption.stem in drawn:  # the tiny config drops some experiments, and their figures
            assert caption.read_text().splitlines()[0] in html, caption.name


# ---------------------------------------------------------------- declarations (no Snakemake)
def test_quick_tier_runs_every_analysis_but_the_fashion_ones():
    p = paper()
    assert set(p.skipped) == {"accuracy_fashion", "spectra_fashion"}
    assert p.skipped["spectra_fashion"] == "experiment 'base_fashion' is not in the quick tier"
    assert set(p.analyses) == set(pipeline.IMAGE_ANALYSES) - set(p.skipped) | {
        "boolean", "lm_loss", "lowrank", "negation", "sae_length"}
    assert p.analyses["spectra"].reads == {"checkpoint": "results/bilinear_mlp/quick/models/base.safetensors",
                                           "data": "data/prepared/mnist_5k.safetensors"}
    sweep = p.analyses["sae_length"].reads["saes"]
    assert [s.rsplit("_x", 1)[1] for s in sweep] == ["1.safetensors", "2.safetensors", "4.safetensors",
                                                     "8.safetensors", "16.safetensors"]
    assert p.analyses["negation"].reads["sae_out"] == sweep[-1]  # the circuit analyses read the longest SAEs


def test_full_tier_reads_every_experiment():
    p = paper("full")
    read = {path for a in p.analyses.values() for v in a.reads.values() for path in ([v] if isinstance(v, str) else v)}
    for experiment in ("base", "base_fashion", "noise", "grid", "size", "adversarial", "similarity_task"):
        assert pipeline.checkpoint_path(p, experiment) in read or pipeline.history_path(p, experiment) in read
    assert "data/prepared/mnist.safetensors" in read and "data/prepared/tinystories.safetensors" in read
    assert not p.skipped


def test_identities_fall_back_to_fashion_when_mnist_is_left_out():
    p = paper("full", {"full": {"datasets": ["fashion_mnist"]}})
    assert p.analyses["identities"].reads["checkpoint"].endswith("/base_fashion.safetensors")
    assert "spectra" in p.skipped and "identities" not in p.skipped


def test_full_tier_batches_may_hold_every_mnist_image():
    # the batch-size check follows the dataset (mnist_5k's 4,000 in the quick tier: tests/bad_config.yaml)
    p = paper("full", {"full": {"experiments": {"base": {"batch_size": 60000}}}})
    assert p.cfg["experiments"]["base"]["batch_size"] == 60000


def test_checkpoint_path_and_run_names_for_other_papers():
    """bilinear_autoencoder reads the size experiment's checkpoint and names its models."""
    p = paper()
    assert pipeline.checkpoint_path(p, "size") == "results/bilinear_mlp/quick/models/size.safetensors"
    names = pipeline.run_names(p.cfg, "size")
    assert names[0] == "d_hidden=20,seed=0" and len(names) == 35  # 7 widths x 5 seeds, in grid order
    assert "d_hidden=50,seed=0" in names  # the model bilinear_autoencoder's quick tier reads
    assert pipeline.run_names(p.cfg, "base") == ["bilinear", "reglu", "relu", "bilinear_bias"]


# ---------------------------------------------------------------- data
def test_corrupt_download_stops_the_pipeline(tmp_path, monkeypatch):
    """A mirror on 127.0.0.1 serves a corrupt MNIST: prepare fails its sha256, the file is gone, nothing trains."""
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
    repo = copy_repo(tmp_path / "repo", [PAPER])
    env = {"REPLICATIONS_MIRROR": f"http://127.0.0.1:{server.server_address[1]}",
           "REPLICATIONS_DATA_DIR": str(repo / "data" / "raw"),
           # the registry's real URLs must fail at once, online or not
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9", "no_proxy": "127.0.0.1"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)  # the scratch run inherits the environment
    try:
        proc = snakemake(repo, "results/bilinear_mlp/full/models/base.safetensors", "--cores", "1",
                         "--config", "tier=full", "bilinear_mlp={full: {datasets: [mnist]}}")
    finally:
        server.shutdown()
    assert proc.returncode != 0
    assert not list((repo / "data").rglob("*.gz")) and not (repo / "data" / "prepared" / "mnist.safetensors").exists()
    assert not (repo / "results" / PAPER / "full" / "models").exists()
    log = (repo / "logs" / "data" / "mnist.log").read_text()
    assert "sha256" in log and "train-images-idx3-ubyte.gz" in log
