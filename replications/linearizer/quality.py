"""Sample quality without downloads: a Frechet distance on the principal components of the training pixels, or
(for 2-D points) the energy distance. Both compare two sets of samples; lower is closer. Neither is FID: FID's
Inception features need downloaded weights, and its values are not comparable with these."""
import numpy as np
from scipy import linalg


def frechet(a, b):
    """Frechet distance between Gaussians fitted to feature sets a and b (rows are samples), as FID computes it."""
    mu_a, mu_b = a.mean(0), b.mean(0)
    cov_a, cov_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    root = linalg.sqrtm(cov_a @ cov_b).real
    return float(((mu_a - mu_b) ** 2).sum() + np.trace(cov_a + cov_b - 2 * root))


def energy_distance(a, b):
    """2 E|A - B| - E|A - A'| - E|B - B'| (Szekely & Rizzo); 0 iff the distributions agree."""
    def mean_dist(x, y):
        return float(np.sqrt(((x[:, None] - y[None]) ** 2).sum(-1)).mean())
    return 2 * mean_dist(a, b) - mean_dist(a, a) - mean_dist(b, b)


class PixelPCA:
    """Projections on the top principal components of the training pixels. Unlike a classifier's outputs, they
    treat training and held-out images alike, so the train-vs-test distance is a fair floor."""

    def __init__(self, x_train, components=64):
        flat = np.asarray(x_train, np.float64).reshape(len(x_train), -1)
        self.mean = flat.mean(0)
        self.basis = np.linalg.svd(flat - self.mean, full_matrices=False)[2][:components].T

    def __call__(self, x):
        return (np.asarray(x, np.float64).reshape(len(x), -1) - self.mean) @ self.basis
