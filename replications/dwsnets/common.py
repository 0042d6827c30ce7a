"""What this paper's scripts share: the INR files, their normalisation, and per-sample hidden permutations."""
import torch
from safetensors.numpy import load_file

from shared.data.inr import from_arrays
from shared.nn.permutation import apply_permutation, mlp_spec, weight_matching


def load_inrs(path):
    """{split: (weights, biases, targets)} of an INR file written by make_inrs.py, each tensor normalised by one
    mean and std per layer tensor over the train split (a scalar per tensor keeps the permutation symmetry)."""
    arrays = load_file(str(path))
    out = {}
    for split in ("train", "test"):
        part = {k.split(".", 1)[1]: v for k, v in arrays.items() if k.startswith(split + ".")}
        w, b = from_arrays(part)
        out[split] = (w, b, torch.as_tensor(part["target"]))
    stats = [(t.mean(), t.std()) for t in out["train"][0] + out["train"][1]]
    for split, (w, b, y) in out.items():
        m = len(w)
        norm = [(t - mu) / sd for t, (mu, sd) in zip(w + b, stats)]
        out[split] = (norm[:m], norm[m:], y)
    return out


def widths_of(weights):
    return [weights[0].shape[-1]] + [w.shape[-2] for w in weights]


def permute_batch(weights, biases, generator):
    """Each sample's hidden neurons reordered by its own random permutation (permutation augmentation)."""
    batch, m = weights[0].shape[0], len(weights)
    w, b = list(weights), list(biases)
    for layer in range(1, m):  # hidden layer `layer`: rows of W_layer and b_layer, columns of W_{layer+1}
        d = b[layer - 1].shape[1]
        perm = torch.rand(batch, d, generator=generator).argsort(1)
        w[layer - 1] = w[layer - 1].gather(1, perm[:, :, None].expand_as(w[layer - 1]))
        b[layer - 1] = b[layer - 1].gather(1, perm)
        w[layer] = w[layer].gather(2, perm[:, None, :].expand_as(w[layer]))
    return w, b


def align(data, reference, max_sweeps=20):
    """Every INR of `data` with its hidden neurons permuted to match `reference` (a one-INR subset) by weight
    matching (Git Re-Basin, Algorithm 1): the "MLP + alignment" baseline's input."""
    m = len(data[0])
    names = [f"l{k}" for k in range(m)]
    spec = mlp_spec(names)
    state = lambda w, b, i: {**{f"{n}.weight": w[k][i] for k, n in enumerate(names)},
                             **{f"{n}.bias": b[k][i] for k, n in enumerate(names)}}
    ref = state(reference[0], reference[1], 0)
    out_w, out_b = [[] for _ in range(m)], [[] for _ in range(m)]
    for i in range(len(data[2])):
        mine = state(data[0], data[1], i)
        perm, _ = weight_matching(spec, ref, mine, max_sweeps=max_sweeps)
        permuted = apply_permutation(spec, perm, mine)
        for k, n in enumerate(names):
            out_w[k].append(permuted[f"{n}.weight"])
            out_b[k].append(permuted[f"{n}.bias"])
    return [torch.stack(t) for t in out_w], [torch.stack(t) for t in out_b], data[2]


def subset(data, index):
    w, b, y = data
    return [t[index] for t in w], [t[index] for t in b], y[index]
