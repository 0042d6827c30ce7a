"""Layers and their weight-based analyses: bilinear layers, recurrent, invertible flows, the Linearizer, autoencoders."""
