"""What the steps and analyses of sgd_xor_features share: the sample-size grid, stacked SGD on the XOR task, the
random-features ridge control, and the sample complexity n*(d) read off an error curve."""
import math

import numpy as np
import torch
import torch.nn.functional as F

from shared.data.hypercube import hypercube_parity
from shared.io.smoke import capped
from shared.train.loop import fit


def sample_sizes(d, grid):
    """n on a geometric grid of `per_octave` points per doubling, from d 2^lo to d 2^hi (a window in n / d, so that
    every d is measured over the same range of samples per dimension)."""
    lo, hi, k = grid["lo_log2_per_d"], grid["hi_log2_per_d"], grid["per_octave"]
    return sorted({round(d * 2 ** (i / k)) for i in range(lo * k, hi * k + 1)})


def test_set(d, points, support, generator):
    """x (points, d) uniform on the hypercube and y = -x_i x_j (shared.data.hypercube)."""
    return hypercube_parity(d, points, support, generator)


@torch.no_grad()
def test_error(net, x, y, chunk=2048):
    """Each run's error (sign of f against y) on a test set shared by the runs: (runs,)."""
    wrong = sum((torch.sign(net(x[i:i + chunk])) != y[i:i + chunk]).sum(1) for i in range(0, len(x), chunk))
    return wrong.double() / len(x)


def logistic(net, x, y):
    """The sum over runs of each run's mean logistic loss log(1 + exp(-y f(x))): every run gets its own gradient."""
    return F.softplus(-y * net(x)).mean(1).sum()


def train_fixed_samples(net, ns, n_seeds, net_cfg, steps, pools, generator):
    """Run (s, n) of the stacked `net` (seed-major: run s * len(ns) + i has n = ns[i]) trained by minibatch SGD for
    `steps` steps on the first n points of seed s's pool (x (seeds, n_max, d), y (seeds, n_max)); batches drawn
    with replacement, so multi-pass once steps x batch > n. Returns the net and the runs [(s, n)]."""
    runs = [(s, n) for s in range(n_seeds) for n in ns]
    seed_of = torch.tensor([s for s, _ in runs])
    size = torch.tensor([n for _, n in runs], dtype=torch.float64)
    x_pool, y_pool = pools

    def batches():
        while True:
            idx = (torch.rand(len(runs), net_cfg["batch_size"], generator=generator, dtype=torch.float64)
                   * size[:, None]).long()
            yield x_pool[seed_of[:, None], idx], y_pool[seed_of[:, None], idx]

    fit(net, batches(), steps=steps, loss_fn=lambda m, b: logistic(m, *b),
        make_optimizer=lambda m: torch.optim.SGD(m.parameters(), lr=net_cfg["lr"]))
    return net, runs


def random_features_curve(x, y, x_test, y_test, ns, width, ridge, generator, stop_below=None, chunk=1024):
    """Test error of ridge regression on `width` frozen random ReLU features relu(w . x), w ~ N(0, I / d), trained on
    the first n points for each n of `ns` (ascending). The Gram matrix of the nested training sets is accumulated,
    so the whole curve costs one pass over the largest n. stop_below: stop once two consecutive errors are below it
    (the rest of the curve reads NaN)."""
    d = x.shape[1]
    w = torch.randn(width, d, generator=generator) / d ** 0.5
    gram = torch.zeros(width, width, dtype=torch.float64)
    rhs = torch.zeros(width, dtype=torch.float64)
    test_feats = torch.relu(x_test @ w.T).double()
    errors, done, below = [], 0, 0
    for n in capped(ns, len(ns), "random_features", count_flops=False):
        for i in range(done, n, chunk):
            phi = torch.relu(x[i:min(n, i + chunk)] @ w.T).double()
            gram += phi.T @ phi
            rhs += phi.T @ y[i:min(n, i + chunk)].double()
        done = n
        a = torch.linalg.solve(gram + ridge * n * torch.eye(width, dtype=torch.float64), rhs)
        errors.append(float((torch.sign(test_feats @ a) != y_test).double().mean()))
        below = below + 1 if stop_below is not None and errors[-1] < stop_below else 0
        if below == 2:
            break
    return errors + [math.nan] * (len(ns) - len(errors))


def n_star(ns, errors, threshold):
    """The sample size at which an error curve first falls below `threshold`, interpolated linearly in (log n,
    error) between the two grid points around the crossing; inf if it never does. The first grid point already
    below: that n (an upper bound)."""
    for i, (n, e) in enumerate(zip(ns, errors)):
        if e < threshold:
            if i == 0:
                return float(n)
            e0, e1 = errors[i - 1], e
            t = (e0 - threshold) / (e0 - e1)
            return float(math.exp(math.log(ns[i - 1]) + t * (math.log(n) - math.log(ns[i - 1]))))
    return math.inf


def log_slope(dims, values):
    """Least-squares slope of log(values) against log(dims)."""
    return float(np.polyfit(np.log(dims), np.log(values), 1)[0])
