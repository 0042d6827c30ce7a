"""Fixtures and grouping for every test folder: tests/ (the library and the conformance suite) and replications/<paper>/tests/."""
import os
import re
from collections import Counter

import pytest
import torch

from shared.pipeline.paper import discover_papers
from shared.pipeline.scratch import ROOT, render_tiny

# Every test runs on one intra-op thread: the suite's parallelism is its xdist workers, one a core, and an OpenMP
# thread pool on a core another worker keeps busy waits out whole time slices on every small op (a 2,000-step
# recurrence in tests/shared/test_recurrent.py: 26 s with two threads beside a busy core, 0.08 s with one).
torch.set_num_threads(1)

GROUPS = set(discover_papers(ROOT / "replications")) | {"from_template"}  # the conformance suite's template paper
# Files whose tests share one fixture across every paper (full_tier_plans: three dry runs planning all papers at once)
ONE_UNIT_FILES = {"tests/papers/test_full_tier_plans.py"}
# Files of independent tests (no shared fixture): each test is a unit of its own, and they fill the end of the run
SPREAD_FILES = {"tests/test_readme_commands.py"}
# Units handed out first: the Slurm run mostly waits on Slurm, so it overlaps the CPU-bound units instead of ending
# the run alone
FIRST = ("tests/test_slurm.py",)


def work_unit(nodeid):
    """The tests that run on one xdist worker together (`-n 2 --dist loadgroup`, pyproject.toml), from a test's node
    id: a paper's tests (those under replications/<paper>/ and those parametrized by its name), so that its tiny
    render, a session fixture, runs once; any other test with the rest of its file, so that a module fixture runs
    once."""
    path, _, name = nodeid.partition("::")
    parts = path.split("/")
    if parts[0] == "replications" and len(parts) > 2:
        return parts[1]
    if path in ONE_UNIT_FILES:
        return path
    if path in SPREAD_FILES:
        return nodeid
    params = name.partition("[")[2].rstrip("]")
    named = [token for token in re.split(r"[-/]", params) if token in GROUPS]
    return named[0] if named else path


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` with the groups of work_unit. xdist's own loadgroup reads groups from node ids that its
    worker suffixes with "@group", which pytest 9.2's structured node ids silently drop (pytest-xdist issue #1386:
    every test then runs wherever, and each paper's tiny render ran on both workers); this scheduler groups from the
    node id itself, and hands the units out in the workers' collection order (pytest_collection_modifyitems)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    config.option.loadscopereorder = False
    return ByWorkUnit(config, log)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """On an xdist worker (every worker sorts alike, so the collections agree): the FIRST units, then the other
    units largest first (a paper's tiny render is most of its unit's time), each unit's tests together in their
    collected order; the spread tests last. Without xdist the collected order stands."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    units = [work_unit(item.nodeid) for item in items]
    size = Counter(units)
    order = {unit: (not unit.startswith(FIRST), n == 1, -n, unit) for unit, n in size.items()}
    items[:] = [item for _, _, item in sorted(zip((order[u] for u in units), range(len(items)), items))]


_TINY = {}


@pytest.fixture(scope="session")
def tiny_render(tmp_path_factory):
    """tiny_render(paper) -> the scratch copy in which the paper's quick tier ran from its tests/tiny.yaml.
    One run per paper per session, shared by the conformance suite and the paper's own tests."""

    def render(paper):
        if paper not in _TINY:
            repo, proc = render_tiny(tmp_path_factory.mktemp(f"tiny_{paper}"), paper)
            assert proc.returncode == 0, f"{paper}: tiny quick tier failed\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            _TINY[paper] = repo
        return _TINY[paper]

    return render
