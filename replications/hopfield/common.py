"""What this paper's scripts share: MNIST-5k as stored patterns, the MIL bags, and the AUC."""
import torch

from shared.data.images import load_images


def load_digits(path):
    """MNIST-5k flat, centred on the training set's mean image: {x_train (4000, 784), y_train, x_test, y_test}."""
    return load_images(path, layout="flat", normalise="centre")


def unit_rows(x):
    return x / x.norm(dim=-1, keepdim=True)


def stored_patterns(x, n, generator):
    """n training images drawn without replacement, unit-normalised, float64: the rows of X."""
    idx = torch.randperm(len(x), generator=generator)[:n]
    return unit_rows(x[idx].double()), idx


def make_bags(y, n_bags, target, size_mean, size_std, generator):
    """Balanced bags of instance indices into y: half positive (at least one `target` digit, drawn from all digits
    until one is in), half negative (drawn from the other digits); bag sizes round(N(size_mean, size_std)) >= 2.
    Returns (index (n_bags, L) padded with 0, mask (n_bags, L) True where an instance is, labels (n_bags,))."""
    others = (y != target).nonzero()[:, 0]
    bags, labels = [], []
    for b in range(n_bags):
        size = max(2, round(size_mean + size_std * torch.randn((), generator=generator).item()))
        positive = b % 2 == 0
        while True:
            pool = torch.arange(len(y)) if positive else others
            idx = pool[torch.randint(len(pool), (size,), generator=generator)]
            if not positive or (y[idx] == target).any():
                break
        bags.append(idx)
        labels.append(float(positive))
    width = max(len(b) for b in bags)
    index = torch.zeros(n_bags, width, dtype=torch.long)
    mask = torch.zeros(n_bags, width, dtype=torch.bool)
    for i, b in enumerate(bags):
        index[i, :len(b)], mask[i, :len(b)] = b, True
    return index, mask, torch.tensor(labels)


def auc(scores, labels):
    """Area under the ROC curve: the probability that a positive outscores a negative (ties count half)."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0).double() + 0.5 * (diff == 0).double()).mean())


def mil_bags(data, m, seed):
    """The train and test bags of one seed (the same for every pooling): {split: (index, mask, labels)}, training bags
    from the training images, test bags from the test images."""
    from shared.pipeline.run import derive_seed
    from shared.io.runtime import generator
    return {split: make_bags(data[f"y_{split}"], m[f"{split}_bags"], m["target"], m["bag_mean"], m["bag_std"],
                             generator(derive_seed(seed, f"{split}_bags")))
            for split in ("train", "test")}


def mil_specs(p):
    m = p["mil"]
    return [{"name": f"{pooling}_s{seed}", "pooling": pooling, "seed": seed, "d_input": 784, "embed": m["embed"],
             "hidden": m["hidden"], "heads": m["heads"]} for seed in m["seeds"] for pooling in m["poolings"]]


@torch.no_grad()
def bag_scores(model, x, bags, chunk=64):
    index, mask, _ = bags
    return torch.cat([model(x[index[i:i + chunk]], mask[i:i + chunk]) for i in range(0, len(index), chunk)])
