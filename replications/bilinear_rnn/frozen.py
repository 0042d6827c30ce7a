"""Proposition 3: frozen random real-diagonal transitions with only a linear readout trained solve parity.

Tokens 0 and 1 act by fixed diagonal matrices diag(a_0), diag(a_1), h_0 = 1, so h_T = a_0^{n_0} a_1^{n_1}
(elementwise). A logistic readout (with bias) on h_T / |h_T| is trained on two sequences, "00" (even) and "01"
(odd), and tested on random sequences of an even length (500). With entries +-1, any unit whose two entries
differ carries (-1)^{n_1}, and at even lengths every other unit is constant, so the readout generalizes exactly
when such a unit exists: probability 1 - 2^-H. Computed in log space, so length 500 neither overflows nor underflows.
"""
import numpy as np
import torch

from shared.pipeline.run import start_run, write_metrics
from shared.io.smoke import capped


def features(a0, a1, n0, n1):
    """h_T / |h_T| for counts n0, n1 (S,) of each token, per draw: a0, a1 (R, H) -> (R, S, H)."""
    log = n0[None, :, None] * a0.abs().log()[:, None] + n1[None, :, None] * a1.abs().log()[:, None]
    sign = torch.where(a0 < 0, -1.0, 1.0)[:, None] ** n0[None, :, None] * torch.where(a1 < 0, -1.0, 1.0)[:, None] ** n1[None, :, None]
    h = sign * torch.exp(log - log.max(-1, keepdim=True).values)
    return h / h.norm(dim=-1, keepdim=True)


def success_rate(H, draws, entries, gen, test, steps=300, lr=1.0):
    """Fraction of `draws` random transitions whose readout, trained on "00" and "01", classifies the test set
    (n0, n1, labels) with accuracy >= 0.99; also the accuracies."""
    if entries == "sign":
        a0, a1 = (torch.randint(0, 2, (2, draws, H), generator=gen).double() * 2 - 1)
    else:
        a0, a1 = torch.randn(2, draws, H, generator=gen, dtype=torch.float64)
    x = features(a0, a1, torch.tensor([2.0, 1.0], dtype=torch.float64), torch.tensor([0.0, 1.0], dtype=torch.float64))
    y = torch.tensor([0.0, 1.0], dtype=torch.float64)
    w = torch.zeros(draws, H, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(draws, 1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr)
    for _ in capped(range(steps), steps, "frozen_logistic"):  # logistic regression, one per draw, by full-batch gradient descent
        loss = torch.nn.functional.binary_cross_entropy_with_logits(torch.einsum("rsh,rh->rs", x, w) + b, y.expand(draws, 2))
        opt.zero_grad()
        (loss * draws).backward()
        opt.step()
    n0, n1, labels = test
    with torch.no_grad():
        logits = torch.einsum("rsh,rh->rs", features(a0, a1, n0, n1), w) + b
        acc = ((logits > 0).double() == labels).double().mean(1)
    return (acc >= 0.99).double().mean().item(), acc.numpy()


def main():
    run = start_run("metrics", "arrays")
    args, a = run.args, run.params  # the analysis section, plus "length" (the test length, made even) and "sequences"
    length = a["length"] - a["length"] % 2
    gen = run.generator(a["seed"], "frozen")  # its own stream of test.seed: not the test sets' (prepare_data.py)
    n1 = torch.randint(0, 2, (a["sequences"], length), generator=gen).sum(1).double()  # 1s in random sequences
    test = (length - n1, n1, n1 % 2)
    rates, predicted = [], []
    for H in a["frozen_sizes"]:
        rate, _ = success_rate(H, a["frozen_draws"], "sign", gen, test)
        rates.append(rate)
        predicted.append(1 - 2.0 ** -H)
    sign_rate, sign_acc = success_rate(a["frozen_width"], a["frozen_seeds"], "sign", gen, test)
    gauss_rate, gauss_acc = success_rate(a["frozen_width"], a["frozen_seeds"], "gaussian", gen, test)
    metrics = {
        "rate_minus_prediction_max_abs": float(np.max(np.abs(np.array(rates) - np.array(predicted)))),
        **{f"success_rate_H{H}": r for H, r in zip(a["frozen_sizes"], rates)},
        "sign_entries_success_frac": sign_rate,
        "gaussian_entries_success_frac": gauss_rate,
    }
    info = {"test_length": length, "test_sequences": a["sequences"], "draws_per_size": a["frozen_draws"],
            "width": a["frozen_width"], "seeds": a["frozen_seeds"], "readout": "logistic, 300 full-batch GD steps"}
    arrays = {"sizes": np.array(a["frozen_sizes"]), "rates": np.array(rates), "predicted": np.array(predicted),
              "sign_acc": sign_acc, "gauss_acc": gauss_acc}
    write_metrics(args.metrics, metrics, info=info, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
