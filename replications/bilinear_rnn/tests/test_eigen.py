"""The per-eigenvector frequency check of analyze_eigen (claim E3) can fail: a set comparison could not."""
import math

import torch

from replications.bilinear_rnn.analyze_eigen import frequency_offsets


def rotation(angle):
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, -s], [s, c]], dtype=torch.float64)


def z_m_representation(m, powers):
    """A_v for v in 0..m-1 on a 4-dim space: frequencies 1 and 2 in a random basis; token v acts as A_1^powers[v]."""
    basis, _ = torch.linalg.qr(torch.randn(4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    out = []
    for p in powers:
        block = torch.block_diag(rotation(2 * math.pi * p / m), rotation(2 * math.pi * 2 * p / m))
        out.append(basis @ block @ basis.T)
    return out


def test_regular_representation_passes():
    offsets = frequency_offsets(z_m_representation(5, range(5)), 5)
    assert offsets.max() < 1e-9


def test_every_token_acting_as_a1_fails():
    # the set {v k mod 5} equals {1, 2, 3, 4} for every v != 0, so a sorted-set test would pass here
    offsets = frequency_offsets(z_m_representation(5, [0, 1, 1, 1, 1]), 5)
    assert offsets.max() >= 0.5


def test_permuted_tokens_fail():
    offsets = frequency_offsets(z_m_representation(5, [0, 2, 1, 3, 4]), 5)
    assert offsets.max() >= 0.5
