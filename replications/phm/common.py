"""What this paper's scripts share: the planted teachers and their data, the run specs of both experiments, the
image data, the training of a student (full-batch Adam, MSE; the classifiers train with
shared.train.classifier.fit_classifier), the distance between spans of multiplication rules, and the accuracy gaps
both classifier experiments score."""
import statistics

import numpy as np
import torch
import torch.nn.functional as F

from shared.data import images
from shared.io.runtime import seed_everything
from shared.nn.phm import hamilton_matrices
from shared.pipeline.run import derive_seed
from shared.train.evaluate import accuracy
from shared.train.loop import fit
from shared.train.schedules import cosine_lr

# ---------------------------------------------------------------- planted teachers (does PHM learn the rule?)

TEACHERS = ("quaternion", "dense")
# the students fitted to each teacher: (name, layer kind, n)
STUDENTS = {"quaternion": (("phm4", "phm", 4), ("phm2", "phm", 2), ("phm8", "phm", 8),
                           ("quaternion", "quaternion", 4), ("dense", "dense", 1)),
            "dense": (("phm4", "phm", 4),)}


def teacher_matrix(kind, d, seed):
    """The teacher's (d, d) matrix, float64: quaternion H = sum_c L(e_c) (x) W_c with W_c ~ N(0, 1/d) (each entry of
    H is +- one entry of a W_c, so outputs of x ~ N(0, I) have unit variance), or dense W ~ N(0, 1/d)."""
    gen = torch.Generator().manual_seed(derive_seed(seed, f"teacher-{kind}"))
    if kind == "dense":
        return torch.randn(d, d, generator=gen, dtype=torch.float64) / d ** 0.5
    w = torch.randn(4, d // 4, d // 4, generator=gen, dtype=torch.float64) / d ** 0.5
    return sum(torch.kron(a, s) for a, s in zip(hamilton_matrices(), w))


def teacher_data(kind, t, seed, split):
    """(x, y) of one teacher: x ~ N(0, I_d), y = H x + noise N(0, noise^2); train and test from separate streams."""
    h = teacher_matrix(kind, t["d"], seed)
    gen = torch.Generator().manual_seed(derive_seed(seed, f"{kind}-{split}"))
    n = t["n_train"] if split == "train" else t["n_test"]
    x = torch.randn(n, t["d"], generator=gen, dtype=torch.float64)
    return x, x @ h.T + t["noise"] * torch.randn(n, t["d"], generator=gen, dtype=torch.float64)


def teacher_specs(cfg):
    t = cfg["teacher"]
    return [{"name": f"{kind}-{name}-seed{seed}", "teacher": kind, "student": name, "arch": "layer", "layer": layer,
             "n": n, "d": t["d"], "seed": seed}
            for kind in TEACHERS for name, layer, n in STUDENTS[kind] for seed in t["seeds"]]


def forever(batch):
    while True:
        yield batch


def fit_student(model, x, y, steps, lr):
    """Full-batch Adam on the mean squared error with a cosine schedule; returns the losses per step."""
    losses = []
    fit(model, forever((x, y)), steps=steps, loss_fn=lambda m, b: F.mse_loss(m(b[0]), b[1]),
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=lr),
        lr_policy=lambda base, step: cosine_lr(base, step, steps), on_step=lambda s, loss: losses.append(loss.item()))
    return losses


def span_sine(a, b):
    """The largest principal-angle sine between span{vec a_i} and span{vec b_i} (a, b: (k, n, n)): 0 when the
    learned rules span the same algebra, 1 when some direction of one is orthogonal to the other."""
    qa = torch.linalg.qr(a.reshape(len(a), -1).T.double())[0]
    qb = torch.linalg.qr(b.reshape(len(b), -1).T.double())[0]
    cos = torch.linalg.svdvals(qa.T @ qb).clamp(max=1.0)
    return float((1 - cos.min() ** 2).clamp(min=0).sqrt())


# ---------------------------------------------------------------- the image MLPs (accuracy at 1/n parameters)

def mlp_params(d_in, hidden, n_classes, layer, n):
    """Trainable numbers of model.MLP: hidden maps (PHM: n^3 + a b / n; quaternion: a b / 4; dense a b) with biases,
    and the dense head."""
    sizes, total = [d_in, *hidden], 0
    for a, b in zip(sizes, sizes[1:]):
        total += b + (a * b if layer == "dense" else a * b // 4 if layer == "quaternion" else n ** 3 + a * b // n)
    return total + sizes[-1] * n_classes + n_classes


def matched_width(e, budget):
    """The width h of a dense MLP d_in -> h -> h -> classes whose parameter count is closest to `budget`."""
    depth = len(e["hidden"])
    return min(range(1, 4 * max(e["hidden"]) + 1),
               key=lambda h: abs(mlp_params(e["d_input"], [h] * depth, e["n_classes"], "dense", 1) - budget))


def image_arms(e):
    """(arm name, layer kind, n, hidden) of every MLP: dense; PHM at each n; the quaternion layer; the dense MLP with
    PHM n = 4's parameter count (narrower); and the linear classifier (the head alone)."""
    phm4 = mlp_params(e["d_input"], e["hidden"], e["n_classes"], "phm", 4)
    matched = [matched_width(e, phm4)] * len(e["hidden"])
    return [("dense", "dense", 1, e["hidden"]), *((f"phm{n}", "phm", n, e["hidden"]) for n in e["ns"]),
            ("quaternion", "quaternion", 4, e["hidden"]), ("dense_matched", "dense", 1, matched),
            ("linear", "dense", 1, [])]


def image_specs(cfg):
    e = cfg["images"]
    return [{"name": f"{arm}-seed{seed}", "arm": arm, "arch": "mlp", "layer": layer, "n": n, "hidden": hidden,
             "d_in": e["d_input"], "n_classes": e["n_classes"], "seed": seed,
             "params": mlp_params(e["d_input"], hidden, e["n_classes"], layer, n)}
            for arm, layer, n, hidden in image_arms(e) for seed in e["seeds"]]


def load_image_data(path):
    """Flat images, centred by the training mean."""
    return images.load_images(path, layout="flat", normalise="centre")


# ---------------------------------------------------------------- a sequence task (accuracy at 1/n parameters)

def agreement_data(s, split):
    """A generated subject-verb-agreement stand-in (deviations.md): (tokens (N, L) int64, labels (N,) int64).

    Tokens 0 .. F-1 are fillers, F .. F+N-1 singular nouns, F+N .. F+2N-1 plural nouns (F = s["fillers"], N =
    s["nouns"]). Each sequence is k fillers (k uniform in 0 .. max_prefix), the subject noun (its number is the
    label, 0 singular / 1 plural, each half the time), then fillers among which m attractor nouns (m uniform in
    attractors[0] .. attractors[1]) sit at random places, each of the other number with probability `opposite`.
    The label is the number of the FIRST noun, so a bag of words cannot read it (control arm `bow`). The data depend
    on s["data_seed"] and the split only, not on the run's seed."""
    rng = np.random.default_rng(derive_seed(s["data_seed"], f"agreement-{split}"))
    count, length, f, nouns = s[f"n_{split}"], s["length"], s["fillers"], s["nouns"]
    tokens = rng.integers(0, f, size=(count, length))
    labels = rng.integers(0, 2, size=count)
    prefix = rng.integers(0, s["max_prefix"] + 1, size=count)
    attractors = rng.integers(s["attractors"][0], s["attractors"][1] + 1, size=count)
    for row in range(count):
        k, label = prefix[row], labels[row]
        tokens[row, k] = f + nouns * label + rng.integers(nouns)
        places = k + 1 + rng.choice(length - k - 1, size=attractors[row], replace=False)
        numbers = np.where(rng.random(attractors[row]) < s["opposite"], 1 - label, label)
        tokens[row, places] = f + nouns * numbers + rng.integers(nouns, size=attractors[row])
    return torch.from_numpy(tokens).long(), torch.from_numpy(labels).long()


def seq_body_params(s, layer, n):
    """Trainable numbers of the encoder blocks' six maps (no biases): Q, K, V, output d x d, the feed-forward d x
    d_ff twice; dense d_in d_out, PHM n^3 + d_in d_out / n. The bag of words has no block (0)."""
    if layer == "bow":
        return 0
    d, f = s["d_model"], s["d_ff"]
    shapes = [(d, d)] * 4 + [(d, f), (f, d)]
    return s["depth"] * sum(a * b if layer == "dense" else n ** 3 + a * b // n for a, b in shapes)


def seq_arms(s):
    """(arm name, layer kind, n): dense, PHM at each n, and the bag of words."""
    return [("dense", "dense", 1), *((f"phm{n}", "phm", n) for n in s["ns"]), ("bow", "bow", 1)]


def seq_specs(cfg):
    s = cfg["seq"]
    keys = ("length", "d_model", "n_head", "d_ff", "depth")
    return [{"name": f"{arm}-seed{seed}", "arm": arm, "arch": "seq", "layer": layer, "n": n, "seed": seed,
             "vocab": s["fillers"] + 2 * s["nouns"], **{k: s[k] for k in keys}, "body_params": seq_body_params(
                 s, layer, n)} for arm, layer, n in seq_arms(s) for seed in s["seeds"]]


# ---------------------------------------------------------------- what the image and sequence analyses both score

def accuracies(models, specs, x, y, build):
    """Test accuracy of every trained network, and of the same network untrained (rebuilt from its init seed: the
    control)."""
    acc = {name: accuracy(model, x, y) for name, model in models.items()}
    untrained = {}
    for name, spec in specs.items():
        seed_everything(derive_seed(spec["seed"], "init"))
        untrained[name] = accuracy(build(spec), x, y)
    return acc, untrained


def accuracy_gaps(acc, untrained, arms, seeds, ns):
    """The mean accuracy of each arm and, for each n, the dense arm's gap to PHM-n trained and untrained; with
    gap(first, second), a mean over seeds of per-seed differences (the arms of a seed see the same batches)."""
    def gap(first, second):
        return statistics.fmean(acc[f"{first}-seed{k}"] - acc[f"{second}-seed{k}"] for k in seeds)

    m = {f"acc_{arm}_mean": statistics.fmean(acc[f"{arm}-seed{k}"] for k in seeds) for arm in arms}
    for n in ns:
        m[f"dense_minus_phm{n}"] = gap("dense", f"phm{n}")
        m[f"dense_minus_untrained_phm{n}"] = statistics.fmean(
            acc[f"dense-seed{k}"] - untrained[f"phm{n}-seed{k}"] for k in seeds)
    return m, gap
