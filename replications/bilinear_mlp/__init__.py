"""Bilinear MLPs (Pearce et al., ICLR 2025) and the bilinear-layer note (Sharkey, 2023)."""
