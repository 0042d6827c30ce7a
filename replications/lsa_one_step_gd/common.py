"""What this paper's scripts share: the settings of each experiment, the prompt law of a run, the trained models."""
import math

import torch

from shared.data.icl_regression import sample_prompts

EXPERIMENTS = ("iso", "noniso", "relu")


def spectrum(d, condition):
    """d eigenvalues spaced geometrically from condition^-1/2 to condition^1/2 (condition 16, d 5: 0.25 ... 4)."""
    if d == 1:
        return [1.0]
    return [condition ** (-0.5 + i / (d - 1)) for i in range(d)]


def covariance(d, condition, basis_seed):
    """Sigma = V diag(spectrum) V^T in a random orthonormal basis V fixed by basis_seed (float64)."""
    gen = torch.Generator().manual_seed(basis_seed)
    basis, _ = torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=torch.float64))
    return basis @ torch.diag(torch.tensor(spectrum(d, condition), dtype=torch.float64)) @ basis.T


def specs(cfg, experiment):
    """One run spec per model of an experiment: its prompt law, its model and its seed."""
    e, m = cfg["experiments"][experiment], cfg["model"]
    base = {"param": m["param"], "mask_query_key": m["mask_query_key"], "init_std": m["init_std"]}
    out = []
    for seed in cfg["seeds"]:
        if experiment == "iso":
            for d in e["d"]:
                for n in e["n"]:
                    for sigma in e["sigma"]:
                        out.append({"name": f"d{d}_n{n}_s{sigma:g}_seed{seed}", "seed": seed, "d": d, "n": n,
                                    "sigma": sigma, "task": "linear", "condition": 1.0, **base})
        elif experiment == "noniso":
            for cond in e["conditions"]:
                out.append({"name": f"k{cond:g}_seed{seed}", "seed": seed, "d": e["d"], "n": e["n"],
                            "sigma": e["sigma"], "task": "linear", "condition": cond,
                            "basis_seed": cfg["basis_seed"], **base})
        else:
            out.append({"name": f"relu_seed{seed}", "seed": seed, "d": e["d"], "n": e["n"], "sigma": e["sigma"],
                        "task": "relu_net", "width": e["width"], "condition": 1.0, **base})
    return out


def law(spec):
    """(cov, w_cov) of a linear run, float64; w ~ N(0, Sigma^-1) when the covariates are N(0, Sigma)."""
    d = spec["d"]
    if spec["condition"] == 1.0 or spec["task"] != "linear":
        eye = torch.eye(d, dtype=torch.float64)
        return eye, eye
    cov = covariance(d, spec["condition"], spec["basis_seed"])
    return cov, torch.linalg.inv(cov)


def prompts(spec, batch, generator, dtype=torch.float32):
    cov, w_cov = law(spec)
    iso = spec["task"] != "linear" or spec["condition"] == 1.0
    return sample_prompts(batch, spec["n"], spec["d"], generator, cov=None if iso else cov,
                          w_cov=None if iso else w_cov, sigma=spec["sigma"], task=spec["task"],
                          width=spec.get("width", 16), dtype=dtype)


def chunks(total, size):
    return [min(size, total - i * size) for i in range(math.ceil(total / size))]

