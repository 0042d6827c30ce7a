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
