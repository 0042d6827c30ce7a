"""Fixtures for every test folder: tests/ (the library and the conformance suite) and replications/<paper>/tests/."""
import pytest
import torch

from shared.pipeline.scratch import render_tiny


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
