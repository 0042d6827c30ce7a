"""Fixtures and grouping for every test folder: tests/ (the library and the conformance suite) and replications/<paper>/tests/."""
from pathlib import Path

import pytest
import torch

from shared.pipeline.paper import discover_papers
from shared.pipeline.scratch import ROOT, render_tiny

GROUPS = set(discover_papers(ROOT / "replications")) | {"from_template"}  # the conformance suite's template paper


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (its own hook of the same name)
def pytest_collection_modifyitems(items):
    """Under xdist (`-n 2 --dist loadgroup`, pyproject.toml) a paper's tests all run on one worker (those under
    replications/<paper>/ and those parametrized by its name), so that its tiny render, a session fixture, runs
    once; any other test runs with the rest of its file, so that a module fixture runs once. An explicit
    xdist_group mark wins."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        parts = Path(item.path).relative_to(ROOT).parts
        params = item.callspec.params.values() if hasattr(item, "callspec") else ()
        named = [v for v in params if isinstance(v, str) and v in GROUPS]
        group = parts[1] if parts[0] == "replications" and len(parts) > 2 else (named[0] if named else str(item.path))
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models gain nothing from intra-op threads, and spinning OpenMP workers on a busy 2-core box cost
    several-fold; every comparison in a module using this is between runs under the same setting.
    Use it with `pytestmark = pytest.mark.usefixtures("one_thread")`."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


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
