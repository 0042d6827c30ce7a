"""The full tiers' smoke runs (`replicate smoke`, shared/pipeline/smoke.py):
  * every paper has a reports/<paper>/full/smoke.json that is fresh (its full config and the code it ran unchanged);
    the smoke runs themselves are not part of the test run: `replicate smoke` makes them;
  * the step cap is a no-op outside a smoke run and, inside one, runs `fit`'s first steps and its last, and
    logs the loop;
  * a stand-in has the registry's shapes, dtypes and label count and says that it is one; the stand-ins a job makes
    itself (shared.data.hub) reach smoke.json.
"""
import json

import numpy as np
import pytest
import torch

from shared.data import hub
from shared.data.prepare import read_prepared
from shared.data.registry import REGISTRY
from shared.pipeline import smoke
from shared.pipeline.paper import discover_papers
from shared.pipeline.scratch import ROOT
from shared.io import smoke as cap
from shared.train.loop import fit

PAPERS = discover_papers(ROOT / "replications")


@pytest.mark.parametrize("paper", PAPERS)
def test_smoke_record_exists_and_is_fresh(paper):
    reasons = smoke.check(paper)
    assert not reasons, f"{paper}: reports/{paper}/full/smoke.json is stale or missing ({'; '.join(reasons)}); " \
                        f"run `replicate smoke {paper}`"


def _train(steps):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    done = []
    fit(model, iter(lambda: (x, y), None), steps=steps, loss_fn=lambda m, b: ((m(b[0]) - b[1]) ** 2).mean(),
        make_optimizer=lambda m: torch.optim.SGD(m.parameters(), lr=0.1), on_step=lambda step, loss: done.append(step))
    return model, done


def test_cap_is_a_no_op_outside_a_smoke_run(monkeypatch):
    monkeypatch.delenv(cap.STEPS_VAR, raising=False)
    steps = range(5)
    assert cap.capped(steps, 5, "fit") is steps
    assert _train(5)[1] == [0, 1, 2, 3, 4]


def test_cap_stops_fit_and_logs_the_loop(monkeypatch, tmp_path):
    log = tmp_path / "loops.jsonl"
    monkeypatch.setenv(cap.STEPS_VAR, "3")
    monkeypatch.setenv(cap.LOG_VAR, str(log))
    model, done = _train(1000)
    assert done == [0, 1, 999]  # the first steps and the last: a loop's ending runs too
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["loop"] == "fit" and record["steps_full"] == 1000 and record["steps_run"] == 3
    assert record["flops_per_step"] > 0 and record["cpu_s_per_step"] >= 0 and record["peak_rss_mb"] > 0
    jobs = smoke.per_job([record])
    assert jobs[record["job"]]["flops_full"] == 1000 * record["flops_per_step"]


def test_standin_has_the_registry_shapes_and_says_so(tmp_path):
    path = tmp_path / "mnist.safetensors"
    what = smoke.standin("mnist", path)
    arrays, meta = read_prepared(path)
    assert what.startswith("stand-in") and meta["stand_in"] and "sources" not in meta
    assert arrays["x_train"].shape == (REGISTRY["mnist"].n_train, 28, 28) and arrays["x_train"].dtype == np.uint8
    assert arrays["y_train"].dtype == np.int64 and len(np.unique(arrays["y_train"])) == REGISTRY["mnist"].n_classes


def test_graph_standin_has_every_entity_in_training(tmp_path):
    """The real splits never test an entity unseen in training, and distmult's loader rejects one that does."""
    path = tmp_path / "wn18.safetensors"
    smoke.standin("wn18", path)
    arrays, _ = read_prepared(path)
    n_entities = smoke.GRAPHS["wn18"][0]
    seen = np.unique(np.concatenate([arrays["train"][:, 0], arrays["train"][:, 2]]))
    assert len(seen) == n_entities and np.isin(arrays["test"][:, [0, 2]], seen).all()


def test_a_papers_tests_are_not_code_the_smoke_ran():
    assert smoke.is_test("replications/distmult/tests/test_distmult.py", "distmult")
    assert not smoke.is_test("replications/distmult/train.py", "distmult")
    assert not smoke.is_test("replications/distmult/tests/test_x.py", "dwsnets")


def test_jobs_stand_ins_reach_the_record(monkeypatch, tmp_path):
    log = tmp_path / "loops.jsonl"
    monkeypatch.setenv(cap.STEPS_VAR, "3")
    monkeypatch.setenv(cap.LOG_VAR, str(log))
    hub.note_standin("Qwen/Qwen3-0.6B", "random weights")
    records = smoke.read_loops(log)
    assert smoke.standins(records) == {"Qwen/Qwen3-0.6B": "stand-in: random weights"}
    assert smoke.per_job(records) == {}  # not a loop


def test_hub_stand_ins_only_in_a_smoke_run(monkeypatch):
    def offline(name, **kwargs):
        raise OSError(f"{name} is not in the cache")

    monkeypatch.delenv(cap.STEPS_VAR, raising=False)
    with pytest.raises(OSError):  # an ordinary run gets the hub's error, never a stand-in
        hub._cached(offline, "Qwen/Qwen3-0.6B")
    monkeypatch.setenv(cap.STEPS_VAR, "3")
    assert hub._cached(offline, "Qwen/Qwen3-0.6B") is None
    text = next(iter(hub.web_text("HuggingFaceFW/fineweb-edu", "sample-10BT", 0)))["text"]
    assert text and isinstance(text, str)


def test_byte_tokenizer_pads_and_truncates_as_a_tokenizer():
    enc = hub.ByteTokenizer(100)(["ab", "abcd"], truncation=True, max_length=3, padding=True)
    assert enc.input_ids.tolist() == [[98, 99, 0], [98, 99, 100]]
    assert enc["attention_mask"].tolist() == [[1, 1, 0], [1, 1, 1]]


def _paper_copy(root, paper="hopfield"):
    """A root holding one paper's config and schema (what an overlay is checked against) and one code file."""
    folder = root / "replications" / paper
    folder.mkdir(parents=True)
    for name in ("config.yaml", "config.schema.yaml"):
        (folder / name).write_text((ROOT / "replications" / paper / name).read_text())
    (root / "code.py").write_text("x = 1\n")
    return folder


@pytest.mark.parametrize("text, wrong", [
    ("scale: 5\nhopfield: {full: {capacity: {seedz: [0]}}}\n", "'hopfield.full.capacity.seedz' is not a key"),
    ("scale: 0.5\nhopfield: {full: {capacity: {seeds: [0]}}}\n", "'scale' is 0.5"),
    ("hopfield: {full: {capacity: {seeds: [0]}}}\n", "exactly the keys 'scale' and 'hopfield'"),
    ("scale: 5\nhopfield: {quick: {capacity: {seeds: [0]}}}\n", "must hold only 'full'"),
    ("scale: 5\nhopfield: {full: {capacity: {probes: -1}}}\n", "invalid config key 'capacity.probes'"),
])
def test_a_bad_overlay_is_refused_naming_paper_file_and_key(tmp_path, text, wrong):
    from shared.pipeline.config import ConfigError

    (_paper_copy(tmp_path) / "smoke.yaml").write_text(text)
    with pytest.raises(ConfigError, match="hopfield: replications/hopfield/smoke.yaml") as err:
        smoke.overlay("hopfield", tmp_path)
    assert wrong in str(err.value)


def test_an_overlay_reaches_the_run_and_its_record(tmp_path):
    folder = _paper_copy(tmp_path)
    assert smoke.overlay("hopfield", tmp_path) is None and smoke.overlay_args(tmp_path, "hopfield", tmp_path) == []
    (folder / "smoke.yaml").write_text("scale: 5\nhopfield: {full: {capacity: {seeds: [0]}}}\n")
    found = smoke.overlay("hopfield", tmp_path)
    assert found == {"file": "replications/hopfield/smoke.yaml", "scale": 5,
                     "config": {"hopfield": {"full": {"capacity": {"seeds": [0]}}}}}
    args = smoke.overlay_args(tmp_path, "hopfield", tmp_path)
    assert args[:2] == ["--configfile", "profiles/full/tier.yaml"]  # the profile's tier file, then the overlay
    assert json.loads((tmp_path / "hopfield.smoke.json").read_text()) == found["config"]  # without `scale`
    run = {"cpu_s": 36.0, "returncode": 0, "timed_out": False}
    jobs = {"j": {"flops_full": 10 ** 12, "cpu_s_rest": 0.0}}
    assert smoke.project(run, jobs, 5)["cpu_hours"] == pytest.approx(5 * smoke.project(run, jobs)["cpu_hours"])
    assert smoke.project(run, jobs, 5)["gpu_hours"] == pytest.approx(5 * smoke.project(run, jobs)["gpu_hours"])


def test_editing_adding_or_removing_an_overlay_makes_the_record_stale(tmp_path):
    from shared.pipeline.provenance import file_hash

    folder, record = _paper_copy(tmp_path), tmp_path / "reports" / "hopfield" / "full" / "smoke.json"
    record.parent.mkdir(parents=True)

    def write_record():
        record.write_text(json.dumps({"inputs": smoke.inputs("hopfield", {"code.py": file_hash(tmp_path / "code.py")},
                                                             tmp_path)}))

    write_record()
    assert smoke.check("hopfield", tmp_path) == []
    overlay = folder / "smoke.yaml"
    overlay.write_text("scale: 5\nhopfield: {full: {capacity: {seeds: [0]}}}\n")
    assert smoke.check("hopfield", tmp_path) == ["replications/hopfield/smoke.yaml changed"]
    write_record()
    assert smoke.check("hopfield", tmp_path) == []
    overlay.write_text("scale: 5\nhopfield: {full: {capacity: {seeds: [0, 1]}}}\n")
    assert smoke.check("hopfield", tmp_path) == ["replications/hopfield/smoke.yaml changed"]
    overlay.unlink()
    assert smoke.check("hopfield", tmp_path) == ["replications/hopfield/smoke.yaml removed"]
