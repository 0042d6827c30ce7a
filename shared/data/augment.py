"""Image augmentation drawn from an explicit generator, so that a run's batches and crops are one seeded stream."""
import torch
import torch.nn.functional as F


def crop_flip(x, generator, pad=4):
    """Random crop of the zero-padded batch back to its size and a random horizontal flip, per image (torchvision's
    RandomCrop(size, padding=pad) + RandomHorizontalFlip). x: (N, C, H, W) on any device; the draws (row offsets,
    column offsets, flips, in that order) come from `generator` on the CPU, the same on every device."""
    n, c, h, w = x.shape
    padded = F.pad(x, (pad,) * 4)
    i = torch.randint(0, 2 * pad + 1, (n,), generator=generator).to(x.device)
    j = torch.randint(0, 2 * pad + 1, (n,), generator=generator).to(x.device)
    flip = (torch.rand(n, generator=generator) < 0.5).to(x.device)
    rows = (i[:, None] + torch.arange(h, device=x.device))[:, None, :, None]
    cols = (j[:, None] + torch.arange(w, device=x.device))[:, None, None, :]
    channels = torch.arange(c, device=x.device)[None, :, None, None]
    out = padded[torch.arange(n, device=x.device)[:, None, None, None], channels, rows, cols]
    return torch.where(flip[:, None, None, None], out.flip(-1), out)
