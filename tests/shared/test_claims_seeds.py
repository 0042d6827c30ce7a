"""shared.pipeline.seeds: the configs of the other seeds (from the papers' real configs), and when seeds.json is
stale."""
from shared.pipeline.config import deep_merge, load_paper_config
from shared.pipeline.scratch import ROOT
from shared.pipeline.seeds import changes, reseeded, seed_overrides, stale_reasons


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
