"""What this paper's scripts share: held-out activations, the trained autoencoders, held-out metrics."""
import numpy as np
import torch

from shared.data import read_prepared
from shared.nn.bae import BilinearAutoencoder
from shared.nn.sae import TopKSAE
from shared.pipeline.run import load_models


def load_split(path, split="test"):
    """(unit-normalised activations, the file's other arrays) of one split."""
    arrays, meta = read_prepared(path)
    x = torch.from_numpy(arrays[f"x_{split}"]).double()
    return BilinearAutoencoder.normalize(x), arrays, meta


def bae_spec(run, d, expansion, bottleneck):
    """The full spec of one bilinear autoencoder run ({name, kind, alpha, seed}): n = expansion d latents; the mixing
    kinds get a bottleneck of bottleneck d (the released default: 2 d)."""
    mixed = run["kind"] in ("mixed", "combined")
    return {**run, "d": d, "n": expansion * d, "bottleneck": bottleneck * d if mixed else None}


def topk_spec(k, d, expansion, seed):
    return {"name": f"topk{k}", "kind": "topk", "k": k, "seed": seed, "d": d, "n": expansion * d}


def build(spec):
    """The untrained model of one run: a TopK SAE (kind 'topk') or a bilinear autoencoder of the spec's kind."""
    if spec["kind"] == "topk":
        return TopKSAE(spec["d"], spec["n"], spec["k"])
    return BilinearAutoencoder(spec["d"], spec["n"], spec["kind"], spec["bottleneck"])


def load_autoencoders(path):
    """{name: model in float64, eval, frozen}, {name: run spec}, checkpoint metadata (safetensors: no pickle)."""
    models, specs, meta = load_models(path, build)
    return {name: model.double() for name, model in models.items()}, specs, meta


def chunks(x, size):
    """Held-out batches of the training batch size: Hoyer density depends on the number of tokens it spans."""
    if len(x) < size:
        raise ValueError(f"the held-out split has {len(x)} samples, fewer than one batch of {size}")
    return [x[i:i + size] for i in range(0, len(x) - size + 1, size)]


@torch.no_grad()
def bae_metrics(model, x, batch_size):
    """Held-out lifted error (all latents) and mean Hoyer density, averaged over batches."""
    errors = [model.reconstruction_error(b).mean().item() for b in chunks(x, batch_size)]
    density = [model.hoyer_density(model.latents(b)).mean().item() for b in chunks(x, batch_size)]
    return float(np.mean(errors)), float(np.mean(density))


@torch.no_grad()
def topk_metrics(sae, x, batch_size):
    """The TopK SAE's error in the same lifted space, exactly: ||x x^T - y y^T||_F^2 = 1 - 2 (x.y)^2 + |y|^4 for unit
    x and reconstruction y (not the 2 eps - eps^2 approximation, which assumes y is a projection of x)."""
    errors, density = [], []
    for b in chunks(x, batch_size):
        y = sae(b)
        errors.append((1 - 2 * (b * y).sum(1) ** 2 + y.pow(2).sum(1) ** 2).mean().item())
        z = sae.encode(b)
        density.append(BilinearAutoencoder.hoyer_density(z).mean().item())
    return float(np.mean(errors)), float(np.mean(density))
