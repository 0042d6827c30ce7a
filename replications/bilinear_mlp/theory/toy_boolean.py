"""The toy Boolean task of the authors' tutorial 0 (dossier T1, T2; App L): train the few tiny models and analyse
them in one job (seconds on a CPU).

n Boolean features, each on with probability p; one output per pair (i < j) of a binary gate; model
head(left(x) * right(x)) (shared.nn.bilinear.Bilinear and a Linear head), MSE, Adam with coupled L2 weight decay, cosine
schedule stepped per step, a fresh batch each step from a seeded generator.

Analysis in float64. With biases, the layer and head act on x' = [x, 1] (dossier section 3 item 10: the constant
coordinate carries the linear terms, a constant hidden unit 1*1 carries the head's bias). Inputs are 0/1, so the
error is exact: the expectation over all 2^n inputs weighted by their probability, not a sample.
"""
import copy
import itertools
import time

import torch
import torch.nn.functional as F
from torch import nn

from shared.io.runtime import generator, seed_everything
from shared.nn import bilinear_analysis as analysis
from shared.nn.bilinear import Bilinear
from shared.pipeline.run import start_run, write_metrics
from shared.io.smoke import capped

GATES = {
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "nand": lambda a, b: ~(a & b),
    "nor": lambda a, b: ~(a | b),
    "xnor": lambda a, b: ~(a ^ b),
}
# name -> (gate, biases in the bilinear layer and head, weight decay key in the config)
RUNS = {
    "and": ("and", False, "weight_decay"),
    "xor": ("xor", False, "weight_decay"),
    "xor_bias": ("xor", True, "weight_decay"),
    "and_code_wd": ("and", False, "code_weight_decay"),  # the toy code's default weight decay, as a control
}


def pairs(n_inputs):
    return list(itertools.combinations(range(n_inputs), 2))


def sample_inputs(gen, n, n_inputs, p_on):
    """n draws of n_inputs independent Boolean features, each True with probability p_on: (n, n_inputs) bool."""
    return torch.rand(n, n_inputs, generator=gen) < p_on


def gate_targets(x, gate):
    """The gate applied to every pair (i < j) of the Boolean inputs x (n, k): (n, k(k-1)/2) float 0/1."""
    idx = torch.tensor(pairs(x.shape[-1]))
    return GATES[gate](x[:, idx[:, 0]], x[:, idx[:, 1]]).float()


def all_inputs(n_inputs, p_on):
    """Every Boolean input (2^n, n) and its probability (2^n,), float64."""
    x = torch.tensor(list(itertools.product([False, True], repeat=n_inputs)))
    xf = x.double()
    return x, (p_on ** xf.sum(-1)) * ((1 - p_on) ** (n_inputs - xf.sum(-1)))


class BooleanModel(nn.Module):
    def __init__(self, n_inputs, n_hidden, n_outputs, bias=False):
        super().__init__()
        self.mixer = Bilinear(n_inputs, n_hidden, bias=bias)
        self.head = nn.Linear(n_hidden, n_outputs, bias=bias)

    def forward(self, x):
        return self.head(self.mixer(x))

    @torch.no_grad()
    def augmented_weights(self, dtype=torch.float64):
        """(left, right, out) of the bias-free form: out (left x' * right x') with x' = [x, 1] (x without biases)."""
        left, right = (w.detach() for w in analysis.layer_weights(self.mixer, dtype))
        out = self.head.weight.detach().to(dtype)
        if self.head.bias is not None:
            one = torch.zeros(1, left.shape[1], dtype=dtype)
            one[0, -1] = 1.0  # a constant hidden unit: (e_c . x') (e_c . x') = 1
            left, right = torch.cat([left, one]), torch.cat([right, one])
            out = torch.cat([out, self.head.bias.to(dtype)[:, None]], dim=1)
        return left, right, out

    def interaction_tensor(self, symmetric=True, dtype=torch.float64):
        """B[o] with out(x) = x'^T B[o] x': (outputs, d', d'); symmetrized unless symmetric=False (the raw einsum)."""
        return analysis.bilinear_tensor(*self.augmented_weights(dtype), symmetric=symmetric)


def train_boolean(gate, bias, n_inputs, n_hidden, p_on, steps, batch_size, lr, weight_decay, seed):
    """One model trained on fresh batches; returns (model, per-step training loss)."""
    seed_everything(seed)  # the init depends only on the seed
    model = BooleanModel(n_inputs, n_hidden, len(pairs(n_inputs)), bias)
    gen = generator(seed)  # the data stream, apart from the init's
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)  # coupled L2, as the toy code
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)
    losses = []
    for _ in capped(range(steps), steps, "toy_boolean"):
        x = sample_inputs(gen, batch_size, n_inputs, p_on)
        loss = F.mse_loss(model(x.float()), gate_targets(x, gate))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    return model.requires_grad_(False).eval(), losses


@torch.no_grad()
def expected_mse(model, gate, n_inputs, p_on):
    """E over the input distribution of the mean squared error over outputs, exact (all 2^n inputs), float64."""
    x, prob = all_inputs(n_inputs, p_on)
    err = (copy.deepcopy(model).double()(x.double()) - gate_targets(x, gate).double()).pow(2).mean(-1)
    return float(prob @ err)


def target_variance(gate, n_inputs, p_on):
    """Mean over outputs of Var(y): the MSE of the best constant predictor."""
    x, prob = all_inputs(n_inputs, p_on)
    y = gate_targets(x, gate).double()
    mean = prob @ y
    return float((prob @ (y - mean) ** 2).mean())


def pair_dominance(q, n_inputs):
    """For each output o = pair (i, j) of symmetric q[o]: q_ij (signed), the largest self-interaction |q_kk|, and the
    largest cross-interaction of any other pair |q_kl|, k < l (indices below n_inputs: the constant one excluded)."""
    rows = []
    for o, (i, j) in enumerate(pairs(n_inputs)):
        m = q[o, :n_inputs, :n_inputs]
        others = [abs(float(m[k, l])) for k, l in pairs(n_inputs) if (k, l) != (i, j)]
        rows.append((float(m[i, j]), float(m.diagonal().abs().max()), max(others)))
    return torch.tensor(rows, dtype=torch.float64)  # (outputs, 3): signed q_ij, max self, max other cross


def antisymmetric_ratio(raw):
    """||B - B^T|| / ||B + B^T|| per output: 0 for a symmetric matrix, 1 for a single off-diagonal entry."""
    return (raw - raw.transpose(-1, -2)).flatten(1).norm(dim=-1) / (raw + raw.transpose(-1, -2)).flatten(1).norm(dim=-1)


def main():
    run = start_run("metrics", "arrays")
    args = run.args
    p = args.params
    n = p["n_inputs"]
    common = dict(n_inputs=n, n_hidden=p["n_hidden"], p_on=p["p_on"], steps=p["steps"],
                  batch_size=p["batch_size"], lr=p["lr"], seed=p["seed"])
    t0 = time.perf_counter()
    models, losses = {}, {}
    for name, (gate, bias, wd_key) in RUNS.items():
        models[name], losses[name] = train_boolean(gate, bias, weight_decay=p[wd_key], **common)
    wall = time.perf_counter() - t0

    mse = {name: expected_mse(models[name], RUNS[name][0], n, p["p_on"]) for name in RUNS}
    fvu = {name: mse[name] / target_variance(RUNS[name][0], n, p["p_on"]) for name in RUNS}
    sym = {name: models[name].interaction_tensor() for name in RUNS}
    raw = {name: models[name].interaction_tensor(symmetric=False) for name in RUNS}

    dom = pair_dominance(sym["and"], n)  # (6, 3)
    pair_abs = dom[:, 0].abs()
    anti = antisymmetric_ratio(raw["and"])
    raw_pair_over_rest = []  # the raw matrix's largest entry on the pair over its largest anywhere else
    for o, (i, j) in enumerate(pairs(n)):
        rest = torch.ones(n, n, dtype=torch.bool)
        rest[i, j] = rest[j, i] = False
        m = raw["and"][o].abs()
        raw_pair_over_rest.append(max(m[i, j], m[j, i]) / m[rest].max())
    metrics = {
        "and_pair_over_self_min": (pair_abs / dom[:, 1]).min().item(),
        "and_pair_over_cross_min": (pair_abs / dom[:, 2]).min().item(),
        "and_pair_positive": bool((dom[:, 0] > 0).all()),
        "and_pair_value_mean": dom[:, 0].mean().item(),  # 0.5 for AND exactly: out = 2 q_ij x_i x_j
        "and_self_max": dom[:, 1].max().item(),
        "and_cross_other_max": dom[:, 2].max().item(),
        "and_raw_antisym_ratio_median": anti.median().item(),
        "and_raw_antisym_ratio_min": anti.min().item(),
        "and_raw_pair_over_rest_min": float(min(raw_pair_over_rest)),
        "and_mse": mse["and"],
        "and_fvu": fvu["and"],
        "xor_nobias_mse": mse["xor"],
        "xor_bias_mse": mse["xor_bias"],
        "xor_nobias_fvu": fvu["xor"],
        "xor_bias_fvu": fvu["xor_bias"],
        "xor_mse_nobias_over_bias": mse["xor"] / mse["xor_bias"] if mse["xor_bias"] > 0 else float("inf"),
        "code_wd_and_fvu": fvu["and_code_wd"],
        "code_wd_and_weight_norm": torch.cat([t.flatten() for t in models["and_code_wd"].parameters()]).norm().item(),
    }
    arrays = {"pairs": torch.tensor(pairs(n)).numpy()}
    for name in RUNS:
        arrays[f"sym_{name}"] = sym[name].numpy()
        arrays[f"raw_{name}"] = raw[name].numpy()
        arrays[f"loss_{name}"] = torch.tensor(losses[name]).numpy()
        arrays[f"mse_{name}"] = torch.tensor(mse[name]).numpy()
    info = {"runs": {k: {"gate": g, "bias": b, "weight_decay": p[w]} for k, (g, b, w) in RUNS.items()},
            "seeds": [p["seed"]], "models": len(RUNS), "device": "cpu", "train_wall_s": round(wall, 1)}
    write_metrics(args.metrics, metrics, info=info, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
