"""shared.train.chunked: outside a smoke run, exactly the function over the whole tensor; in one, the full shape with
only the capped chunks computed (the first two and the last) and zeros between."""
import pytest
import torch

from shared.io.smoke import LOG_VAR, STEPS_VAR
from shared.train.chunked import chunked


def fn(x):
    return torch.stack([x.sum(1), x.max(1).values], 1) + 1.0  # + 1: no computed row is zero


def test_outside_a_smoke_run_it_is_the_function_of_the_whole_tensor(monkeypatch):
    monkeypatch.delenv(STEPS_VAR, raising=False)
    x = torch.randn(1000, 7, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(chunked(fn, x, 64, "test"), fn(x), rtol=0, atol=1e-6)


def smoke_run(monkeypatch, tmp_path, count_flops):
    monkeypatch.setenv(STEPS_VAR, "3")
    monkeypatch.setenv(LOG_VAR, str(tmp_path / "smoke.jsonl"))
    x = torch.randn(1000, 7, generator=torch.Generator().manual_seed(0))
    out = chunked(fn, x, 64, "test", count_flops=count_flops)  # 16 chunks, the last of 40 rows
    assert out.shape == (1000, 2) and '"steps_full": 16' in (tmp_path / "smoke.jsonl").read_text()
    computed = [i for i in range(16) if out[64 * i:64 * (i + 1)].abs().sum() > 0]
    for i in computed:
        assert torch.equal(out[64 * i:64 * (i + 1)], fn(x[64 * i:64 * (i + 1)]))
    return computed


def test_a_smoke_run_computes_the_capped_chunks_and_keeps_the_shape(monkeypatch, tmp_path):
    assert smoke_run(monkeypatch, tmp_path, count_flops=True) == [0, 1, 15]


@pytest.mark.xfail(strict=True, reason="shared.io.smoke.capped with count_flops=False drops the first step in a "
                   "smoke run (neither of its branches yields it); fixing it stales every paper's records")
def test_a_smoke_run_without_flop_counting_computes_the_same_chunks(monkeypatch, tmp_path):
    assert smoke_run(monkeypatch, tmp_path, count_flops=False) == [0, 1, 15]
