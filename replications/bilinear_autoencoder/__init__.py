"""Finding Manifolds With Bilinear Autoencoders (Dooms & Gauderis, arXiv 2510.16820)."""
