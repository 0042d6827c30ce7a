"""Fixtures shared by several test modules."""
import pytest
import torch


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models gain nothing from intra-op threads, and spinning OpenMP workers on a busy 2-core box cost
    several-fold; every comparison in a module using this is between runs under the same setting.
    Use it with `pytestmark = pytest.mark.usefixtures("one_thread")`."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
