"""conftest.py's work units hold under a real `pytest -n 2 --dist loadgroup`: every test of a paper runs on one
worker, so that its tiny render runs once. xdist's own grouping once stopped silently (pytest-xdist issue #1386),
and the suite then rendered most papers twice; this run fails if the grouping does.
"""
import json
import shutil
import subprocess
import sys
from collections import defaultdict

from shared.pipeline.scratch import ROOT

PAPERS = ["git_re_basin", "distmult"]  # real names: conftest.py knows the papers of this repository
RECORD = '''
import json, os, pytest
def record(request, tmp):
    with open(os.path.join(tmp, str(abs(hash(request.node.nodeid))) + ".json"), "w") as f:
        json.dump([request.node.nodeid, os.environ["PYTEST_XDIST_WORKER"]], f)
'''


def test_group_of_a_node_id():
    from conftest import work_unit

    assert work_unit("replications/distmult/tests/test_distmult.py::test_x") == "distmult"
    assert work_unit("tests/papers/test_conformance.py::test_rerun_is_a_no_op[distmult]") == "distmult"
    assert work_unit("tests/papers/test_captions.py::test_caption[git_re_basin/ste.rst]") == "git_re_basin"
    assert work_unit("tests/papers/test_paper_configs.py::test_bad[distmult-0-seeds]") == "distmult"
    assert work_unit("tests/papers/test_full_tier_plans.py::test_plans[distmult-slurm]") == \
        "tests/papers/test_full_tier_plans.py"
    assert work_unit("tests/shared/test_loop.py::test_fit[sgd]") == "tests/shared/test_loop.py"


def test_each_papers_tests_run_on_one_worker(tmp_path):
    shutil.copy2(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # this folder is the root: node ids as in the repository
    out = tmp_path / "records"
    out.mkdir()
    (tmp_path / "tests").mkdir()
    # ten tests parametrized by the two papers, collected alternately, plus each paper's own folder
    params = "@pytest.mark.parametrize('paper', %r)\n" % PAPERS
    body = RECORD + "".join(f"{params}def test_{i}(request, paper):\n    record(request, {str(out)!r})\n"
                            for i in range(10))
    (tmp_path / "tests" / "test_by_paper.py").write_text(body)
    for paper in PAPERS:
        folder = tmp_path / "replications" / paper / "tests"
        folder.mkdir(parents=True)
        (folder / f"test_{paper}_own.py").write_text(
            RECORD + "".join(f"def test_own_{i}(request):\n    record(request, {str(out)!r})\n" for i in range(5)))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist",
                           "loadgroup", "--import-mode=importlib", str(tmp_path)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    workers = defaultdict(set)
    for path in out.glob("*.json"):
        nodeid, worker = json.loads(path.read_text())
        workers["distmult" if "distmult" in nodeid else "git_re_basin"].add(worker)
    assert sum(1 for _ in out.glob("*.json")) == 30
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
    assert len(set().union(*workers.values())) == 2, "both workers had work"
