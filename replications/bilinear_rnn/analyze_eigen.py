"""Weight analysis: the eigenvalues of the learned transitions A_v of a full bilinear model on addition mod m.

A representation of Z_m by rotations gives every A_v eigenvalues exp(+-2 pi i k v / m): all of one modulus, at
angles that are multiples of 2 pi / m, and token v's multiples are v times token 1's. The model only ever visits
the span of the states it reaches, and at long lengths only the dominant part of that span survives the per-step
renormalization. So the eigenvalues are those of A_v restricted to the span of the unit states visited after a
burn-in (positions `subspace_positions`), cut where the singular values fall below `subspace_tol` of the largest.
The same metrics at `subspace_tol_first`, the cut chosen before the first run, carry the suffix `_first_cut`.

Frequencies are matched per eigenvector, not compared as sets: a set test ({v k mod m} against token v's angles)
passes for m = 5 even when every token acts as A_1, because v * {1, 2, 3, 4} = {1, 2, 3, 4} mod 5. Instead each
eigenvector of A_1 (frequency k) is carried to every token, and token v must rotate it by v k (mod m).
"""
import numpy as np
import torch

from shared.pipeline.run import load_models, start_run, write_metrics

from .common import read_test_sets


def visited_basis(model, tokens, positions, tol):
    """Orthonormal basis (H, k) of the span of the unit states visited at `positions` [from, to) on `tokens`, k by
    relative tolerance on the singular values."""
    with torch.no_grad():
        units, _ = model.rnn(model.one_hot(tokens[:, : positions[1]]))
    states = units[:, positions[0] :].reshape(-1, units.shape[-1])
    _, s, vt = torch.linalg.svd(states, full_matrices=False)
    k = int((s > tol * s[0]).sum())
    return vt[:k].T, s / s[0]


def frequency_offsets(restricted, m):
    """Per token v and eigenvector j of A_1: the distance, in units of 2 pi / m on the circle, between the angle at
    which A_v acts on that eigenvector and v * k_j, where k_j is A_1's multiple on it. (m, k) array; the rows of a
    rotation representation A_v = A_1^v are all near 0, a token acting as A_1 is off by (v - 1) k_j."""
    values, vectors = torch.linalg.eig(restricted[1].to(torch.complex128))
    k1 = torch.round(values.angle() * m / (2 * torch.pi))
    inverse = torch.linalg.inv(vectors)
    offsets = []
    for v, A in enumerate(restricted):
        acting = torch.diagonal(inverse @ A.to(torch.complex128) @ vectors)  # A_v on A_1's eigenvectors
        step = acting.angle() * m / (2 * torch.pi) - v * k1
        offsets.append((step - m * torch.round(step / m)).abs())  # circular distance, modulo m
    return torch.stack(offsets).numpy()


def eigen_structure(model, m, tokens, positions, tol):
    """Metrics of the A_v restricted to the visited span cut at `tol`, their normalized eigenvalues (m, k), and each
    token's rounded multiples."""
    basis, singular = visited_basis(model, tokens, positions, tol)
    eigvals, invariance, restricted = [], [], []
    for v in range(m):
        A = model.rnn.matrices(torch.eye(m, dtype=torch.float64)[v : v + 1])[0]
        restricted.append(basis.T @ A @ basis)
        invariance.append(((A @ basis - basis @ restricted[-1]).norm() / (A @ basis).norm()).item())
        eigvals.append(torch.linalg.eigvals(restricted[-1]).numpy())
    eigvals = np.array(eigvals)  # (m, k)
    normalized = eigvals / np.abs(eigvals).max(1, keepdims=True)
    moduli = np.abs(normalized)
    steps = np.angle(eigvals) * m / (2 * np.pi)  # angles in units of 2 pi / m
    nearest = np.round(steps)
    multiples = [sorted(int(k) % m for k in row) for row in nearest]
    offsets = frequency_offsets(restricted, m)
    metrics = {
        "subspace_dim": basis.shape[1],
        "subspace_invariance_err_max": max(invariance),
        "modulus_spread_max": float(1 - moduli.min()),
        "angle_offset_max": float(np.abs(steps - nearest).max()),
        "frequency_offset_max": float(offsets.max()),
        # each token rounds to its own expected multiple on every eigenvector of A_1
        "frequencies_follow_token": bool(offsets.max() < 0.5),
    }
    return metrics, normalized, multiples, singular


def main():
    run = start_run("checkpoint", "tasks", "metrics", "arrays")
    args, a = run.args, run.params
    models, specs, meta = load_models(args.checkpoint)
    name = sorted(n for n, s in specs.items() if s["task"] == a["eigen_task"] and s["seed"] == a["eigen_seed"])[0]
    model, m = models[name].double(), specs[name]["n_states"]  # pipeline.check: an addition task of this run
    tokens = read_test_sets(args.tasks)[a["eigen_task"]][0][:256]
    metrics, normalized, multiples, singular = eigen_structure(model, m, tokens, a["subspace_positions"],
                                                               a["subspace_tol"])
    # the same at the cut chosen before the first run (subspace_tol was chosen after it; deviations.md)
    first, _, first_multiples, _ = eigen_structure(model, m, tokens, a["subspace_positions"], a["subspace_tol_first"])
    metrics.update({f"{key}_first_cut": value for key, value in first.items()})
    info = {"run": name, "task": a["eigen_task"], "m": m, "multiples_per_token": multiples,
            "multiples_per_token_first_cut": first_multiples,
            "experiment": meta["experiment"], "visited_singular_values": singular[:12].tolist()}
    arrays = {"eigvals": normalized, "m": np.array(m)}
    write_metrics(args.metrics, metrics, meta, info=info, arrays=arrays, arrays_path=args.arrays)
    print(metrics, multiples)

if __name__ == "__main__":
    main()
