"""shared.pipeline.seeds: the configs of the other seeds (from the papers' real configs), and when seeds.json is
stale."""
import pytest

from shared.pipeline.config import deep_merge, load_paper_config
from shared.pipeline.scratch import ROOT
from shared.pipeline.seeds import SHIFT, _still_valid_runs, changes, reseeded, seed_overrides, stale_reasons


def test_every_seed_is_raised_and_nothing_else():
    cfg = {"seed": 0, "seeds": [0, 1], "pair": {"seeds": {"a": 0, "b": 1}}, "analysis": {"noise_seed": 1,
           "frozen_seeds": 20, "steps": 5}, "runs": [{"seeds": [2], "lr": 0.1}], "flag_seed": True}
    new = reseeded(cfg, 1000)
    assert new == {"seed": 1000, "seeds": [1000, 1001], "pair": {"seeds": {"a": 1000, "b": 1001}},
                   "analysis": {"noise_seed": 1001, "frozen_seeds": 20, "steps": 5},
                   "runs": [{"seeds": [1002], "lr": 0.1}], "flag_seed": True}
    assert changes(cfg, new) == {"seed": 1000, "seeds": [1000, 1001], "pair": {"seeds": {"a": 1000, "b": 1001}},
                                 "analysis": {"noise_seed": 1001}, "runs": [{"seeds": [1002], "lr": 0.1}]}
    assert deep_merge(cfg, changes(cfg, new)) == new


def test_overrides_of_real_papers_resolve_to_their_config_with_seeds_raised():
    for paper in ("layerwise_lmc", "bilinear_rnn", "lsa_one_step_gd"):
        paper_dir = ROOT / "replications" / paper
        override = seed_overrides([paper], 2000)[paper]
        cfg, moved = load_paper_config(paper_dir, "quick"), load_paper_config(paper_dir, "quick", override)
        assert moved == reseeded(cfg, 2000) and moved != cfg
    assert load_paper_config(ROOT / "replications" / "bilinear_rnn", "quick",
                             seed_overrides(["bilinear_rnn"], 1000)["bilinear_rnn"])["analysis"]["frozen_seeds"] == 20


def test_seeds_json_is_stale_when_config_or_code_changed():
    doc = {"inputs": {"config": "c1", "code": {"shared/a.py": "1", "replications/p/b.py": "2"}}}
    assert stale_reasons(doc, {"config": "c1", "code": {"shared/a.py": "1", "replications/p/b.py": "2"}}) == []
    assert stale_reasons(doc, {"config": "c2", "code": {"shared/a.py": "1"}}) == ["config changed"]
    assert stale_reasons(doc, {"config": "c1", "code": {"shared/a.py": "9", "replications/p/b.py": "mixed"}}) == [
        "code changed: replications/p/b.py, shared/a.py"]


def test_a_later_call_keeps_earlier_seeds_only_from_the_same_config_and_code():
    inputs = {"config": "c1", "code": {"shared/a.py": "1"}}
    old = {"seed_shift": SHIFT, "inputs": inputs, "runs": {"1": {"metrics": {}}, "2": {"metrics": {}}}}
    assert _still_valid_runs(old, inputs, [2]) == {"1": {"metrics": {}}}  # seed 2 is measured again
    assert _still_valid_runs(old, {"config": "c1", "code": {"shared/a.py": "9"}}, [3]) == {}
    assert _still_valid_runs(old | {"seed_shift": 7}, inputs, [3]) == {}
    assert _still_valid_runs(None, inputs, [1]) == {}


@pytest.mark.slow
def test_tiny_rerun_at_another_seed_reaches_the_report(tmp_path):
    """A real tiny run: render the paper, rerun it at seed +1000, re-render from the kept metrics."""
    import json
    import shutil
    from pathlib import Path

    from shared.pipeline.report import rerender
    from shared.pipeline.scratch import render_tiny, tiny_configfiles
    from shared.pipeline.seeds import measure_seeds

    paper = "lsa_one_step_gd"
    repo, proc = render_tiny(tmp_path / "repo", paper)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tiny = [str(Path(f).relative_to(ROOT)) for f in tiny_configfiles(paper)]
    for f in tiny:
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / f, repo / f)
    doc = measure_seeds([paper], seeds=[1], root=repo, configfiles=tiny)[paper]
    run = doc["runs"]["1"]
    assert run["config_override"] == {"basis_seed": 1007, "seeds": [1000]} and run["metrics"]
    written = json.loads((repo / "reports" / paper / "quick" / "seeds.json").read_text())
    assert set(written["claims"][next(iter(written["claims"]))]["statuses"]) == {"0", "1"}
    results = rerender(paper, "quick", repo / "reports", repo / "replications")
    assert {r.robustness for r in results if r.status in ("PASS", "FAIL")} <= {"robust", "fragile"}
    assert "| seeds +1000 |" in (repo / "reports" / paper / "quick" / "report.md").read_text()


def test_a_paper_that_reads_another_runs_alone_and_the_paper_it_reads_keeps_its_seeds():
    from shared.pipeline.paper import discover_papers
    from shared.pipeline.scratch import ROOT
    from shared.pipeline.seeds import invocations

    groups = invocations(discover_papers(ROOT / "replications"))
    assert ["bilinear_autoencoder"] in groups and "bilinear_mlp" in groups[0]  # it names a bilinear_mlp run by seed
    assert set(seed_overrides(["bilinear_autoencoder"], 1000)) == {"bilinear_autoencoder"}
