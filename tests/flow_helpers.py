"""Flows for exactness tests: a fresh flow is nearly the identity (zero-initialised coupling outputs), so an
inversion or linearity check on it proves little; these move every parameter off its init first."""
import torch

from shared.nn.invertible import ActNorm


def perturbed(module, seed, scale):
    """Add N(0, scale^2) noise to every parameter, mark every ActNorm fitted (so nothing is re-fit from the next
    batch) and switch to eval; returns the module."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
    for m in module.modules():
        if isinstance(m, ActNorm):
            m.initialized.fill_(True)
    return module.eval()
