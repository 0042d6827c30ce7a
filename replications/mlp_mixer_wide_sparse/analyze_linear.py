"""The linear algebra of the paper's sections 2-3, float64: the channel layer as a commutation-permuted block
diagonal (I4), the product of linear channel and token mixing as a Monarch matrix (I5), and the implicit sparsity
of a trained linear Mixer's effective weight (claim F6, controls K3-K4).

Sparsity: a linear Mixer f(X) = W1 X W3 (effective weight U = W3^T (x) W1) and a dense linear map U on vec(X) are
fitted by full-batch gradient descent to a few samples of a teacher Y = A X B^T whose factors are sparse (so the
teacher's U* = B (x) A is sparse and lies in the Mixer's family). With fewer samples than the dense map's
parameters per output, the dense fit is not unique; gradient descent from zero reaches its minimum-norm fit.
The L1/L2 ratio l1(U) / (sqrt(N) l2(U)) (1 for a flat matrix, sqrt(density) for a sparse one with equal entries)
of each trained effective weight is compared; the Mixer at its initialisation is the control."""
import math
import statistics

import torch
import torch.nn.functional as F

from shared.nn.mixer import MixerBlock, commutation, effective_layers
from shared.nn.structured import Monarch
from shared.pipeline.run import start_run, write_metrics
from shared.train.loop import fit


def l1_l2(u):
    return float(u.abs().sum() / (math.sqrt(u.numel()) * u.norm()))


def sparse_factor(n, p, gen):
    return torch.randn(n, n, generator=gen, dtype=torch.float64) * (torch.rand(n, n, generator=gen,
                                                                               dtype=torch.float64) < p)


def train(params, predict, x, y, lin):
    """Full-batch gradient descent on the mean squared error; returns the final training loss."""
    fit(params, iter(lambda: (x, y), None), steps=lin["steps"],
        loss_fn=lambda ps, b: F.mse_loss(predict(ps, b[0]), b[1]),
        make_optimizer=lambda ps: torch.optim.SGD(ps, lr=lin["lr"]))
    with torch.no_grad():
        return float(F.mse_loss(predict(params, x), y) / y.pow(2).mean())


def sparsity_run(lin, seed):
    s = c = lin["size"]
    gen = torch.Generator().manual_seed(seed)
    a, b = sparse_factor(s, lin["teacher_density"], gen), sparse_factor(c, lin["teacher_density"], gen)
    x = torch.randn(lin["samples"], s, c, generator=gen, dtype=torch.float64)
    x_test = torch.randn(256, s, c, generator=gen, dtype=torch.float64)
    y, y_test = a @ x @ b.T, a @ x_test @ b.T
    vx, vx_test = x.transpose(1, 2).reshape(len(x), -1), x_test.transpose(1, 2).reshape(len(x_test), -1)

    w1 = (lin["init_scale"] * torch.randn(s, s, generator=gen, dtype=torch.float64)).requires_grad_()
    w3 = (lin["init_scale"] * torch.randn(c, c, generator=gen, dtype=torch.float64)).requires_grad_()
    u_init = torch.kron(w3.detach().T.contiguous(), w1.detach())
    mixer_loss = train([w1, w3], lambda ps, xb: ps[0] @ xb @ ps[1], x, y, lin)
    u_mixer = torch.kron(w3.detach().T.contiguous(), w1.detach())

    u = torch.zeros(s * c, s * c, dtype=torch.float64, requires_grad=True)  # GD from zero: the minimum-norm fit
    vy = y.transpose(1, 2).reshape(len(y), -1)
    dense_loss = train([u], lambda ps, v: v @ ps[0].T, vx, vy, lin)
    u_dense = u.detach()

    def test_err(w):
        pred = vx_test @ w.T
        want = y_test.transpose(1, 2).reshape(len(y_test), -1)
        return float((pred - want).pow(2).mean() / want.pow(2).mean())
    return {"mixer": l1_l2(u_mixer), "dense": l1_l2(u_dense), "init": l1_l2(u_init),
            "teacher": l1_l2(torch.kron(b, a)), "mixer_train": mixer_loss, "dense_train": dense_loss,
            "mixer_test": test_err(u_mixer), "dense_test": test_err(u_dense)}


def identities(seed):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    s, c = 5, 7
    block = MixerBlock(s, c, expansion=2).double()
    w3t = block.channel_up.weight.detach().double()  # (2C, C): W3^T
    k_in, k_out = commutation(s, c), commutation(s, 2 * c)
    channel = effective_layers(block)[2][0]
    commutation_err = float((channel - k_out.T @ torch.kron(torch.eye(s, dtype=torch.float64), w3t) @ k_in)
                            .abs().max())
    n = 6  # Monarch's shuffle is a transpose when S = C = blocks
    w1, w3 = (torch.randn(n, n, generator=gen, dtype=torch.float64) for _ in range(2))
    monarch = Monarch(n * n, n * n, n).double()
    with torch.no_grad():
        monarch.right.copy_(w1.expand(n, n, n))
        monarch.left.copy_(w3.T.expand(n, n, n))
    monarch_err = float((commutation(n, n).T @ monarch.matrix() - torch.kron(w3.T.contiguous(), w1)).abs().max())
    return commutation_err, monarch_err


def main():
    run = start_run("metrics", "arrays")
    lin = run.params["linear"]
    rows = [sparsity_run(lin, run.seed(seed, "linear")) for seed in lin["seeds"]]
    m = {"mixer_over_dense_l1l2_max": max(r["mixer"] / r["dense"] for r in rows),
         "init_mixer_over_dense_l1l2_max": max(r["init"] / r["dense"] for r in rows),
         "teacher_over_dense_l1l2_max": max(r["teacher"] / r["dense"] for r in rows),
         "train_rel_err_max": max(max(r["mixer_train"], r["dense_train"]) for r in rows),
         "mixer_test_rel_err_mean": statistics.fmean(r["mixer_test"] for r in rows),
         "dense_test_rel_err_mean": statistics.fmean(r["dense_test"] for r in rows)}
    for key in ("mixer", "dense", "init", "teacher"):
        m[f"l1l2_{key}_mean"] = statistics.fmean(r[key] for r in rows)
    m["channel_commutation_max_abs"], m["monarch_max_abs"] = identities(run.seed(0, "identities"))
    info = {"per_seed": rows, "size": lin["size"], "samples": lin["samples"],
            "dense_params_per_output": lin["size"] ** 2, "equations_per_output": lin["samples"]}
    write_metrics(run.args.metrics, m, info=info, arrays={}, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
