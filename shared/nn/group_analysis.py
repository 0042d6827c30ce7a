"""Weight analyses for networks on group tables: where each unit's weights sit among the group's representations,
and the CP rank of the tensor a network (or a word operation) computes.

A unit's input weights u_k(a), v_k(b) and output weights out[k, c] are functions on the group, so each is a vector
in R^n that splits over the real isotypic components (shared.data.groups.real_components; for Z_m, the Fourier
frequencies). A unit "aligned" with a component puts (almost) all its energy there.
"""
import numpy as np
import torch

from shared.io.smoke import capped


def component_energy(vectors, components):
    """(..., n) vectors -> (..., n_components) fractions of each vector's squared norm in each component."""
    v = np.asarray(vectors, dtype=np.float64)
    total = (v ** 2).sum(-1, keepdims=True)
    energy = np.stack([np.einsum("...i,ij,...j->...", v, c.projector, v) for c in components], -1)
    return energy / np.where(total > 0, total, 1.0)


def unit_alignment(member_state, components, skip_trivial=True):
    """Per hidden unit: the component holding most of the energy of [u_k; v_k] (both input tables together), that
    share, and whether u_k, v_k and the output row out[k] each peak in that same component.
    Returns dict of arrays over units: component (index), purity, same_component (bool), norm (||u|| ||v|| ||out||)."""
    u, v, w = (np.asarray(member_state[k], dtype=np.float64) for k in ("left", "right", "out"))
    e_u, e_v, e_w = component_energy(u.T, components), component_energy(v.T, components), component_energy(w, components)
    nu, nv = (u ** 2).sum(0, keepdims=True).T, (v ** 2).sum(0, keepdims=True).T
    joint = (e_u * nu + e_v * nv) / np.maximum(nu + nv, 1e-300)
    if skip_trivial:  # the constant direction carries no information about the pair (a, b)
        joint = joint.copy()
        joint[:, 0] = -1
    best = joint.argmax(1)
    units = np.arange(len(best))
    return {"component": best, "purity": joint[units, best],
            "same_component": (e_u.argmax(1) == best) & (e_v.argmax(1) == best) & (e_w.argmax(1) == best),
            "norm": np.sqrt(nu[:, 0] * nv[:, 0] * (w ** 2).sum(1))}


def support_triples(tensor, components, tol=1e-9):
    """{(i, j, k)}: component triples on which the tensor's projection P_i x P_j x P_k is nonzero (relative tol)."""
    t = np.asarray(tensor, dtype=np.float64)
    scale = np.linalg.norm(t)
    out = set()
    for i, ci in enumerate(components):
        ti = np.einsum("ia,abc->ibc", ci.projector, t)
        for j, cj in enumerate(components):
            tij = np.einsum("jb,ibc->ijc", cj.projector, ti)
            for k, ck in enumerate(components):
                if np.linalg.norm(np.einsum("kc,ijc->ijk", ck.projector, tij)) > tol * scale:
                    out.add((i, j, k))
    return out


def network_tensor(member_state, activation):
    """The (n, n, n_out) logit table of one member, and for quadratic and bilinear units the part bilinear in
    (a, b): sum_k c u_k(a) v_k(b) out[k, c] with c = 2 (quadratic) or 1 (bilinear)."""
    u, v, w = (torch.as_tensor(member_state[k], dtype=torch.float64) for k in ("left", "right", "out"))
    cross = torch.einsum("ak,bk,kc->abc", u, v, w)
    if activation == "bilinear":
        return cross.numpy(), cross.numpy()
    if activation == "quadratic":
        full = cross * 2 + torch.einsum("ak,kc->ac", u * u, w)[:, None] + torch.einsum("bk,kc->bc", v * v, w)[None]
        return full.numpy(), (2 * cross).numpy()
    raise ValueError(f"network_tensor is defined for quadratic and bilinear units, not {activation!r}")


def _khatri_rao(x, y):
    return (x[:, None, :] * y[None, :, :]).reshape(-1, x.shape[1])


def cp_als(tensor, rank, restarts=4, sweeps=500, seed=0, tol=1e-10):
    """Best-of-restarts CP-ALS: tensor ~ sum_r a_r x b_r x c_r. Returns (relative error, (A, B, C)).
    Each restart draws Gaussian factors from a generator seeded with (seed, restart); stops early below tol."""
    t = torch.as_tensor(tensor, dtype=torch.float64)
    shape, norm = t.shape, t.norm()
    unfoldings = [t.reshape(shape[0], -1), t.permute(1, 0, 2).reshape(shape[1], -1), t.permute(2, 0, 1).reshape(shape[2], -1)]
    best = (float("inf"), None)
    for restart in range(restarts):
        g = torch.Generator().manual_seed(int(seed) * 1000 + restart)
        factors = [torch.randn(n, rank, generator=g, dtype=torch.float64) for n in shape]
        for _ in capped(range(sweeps), sweeps, "cp_als"):  # a smoke run: a few sweeps (they never converge untrained)
            for mode in range(3):
                others = [factors[m] for m in range(3) if m != mode]
                gram = (others[0].T @ others[0]) * (others[1].T @ others[1])
                rhs = unfoldings[mode] @ _khatri_rao(*others)
                factors[mode] = torch.linalg.lstsq(gram, rhs.T, driver="gelsd").solution.T
            error = ((unfoldings[0] - factors[0] @ _khatri_rao(factors[1], factors[2]).T).norm() / norm).item()
            if error < tol:
                break
        if error < best[0]:
            best = (error, tuple(f.numpy() for f in factors))
    return best


def cp_rank(tensor, ranks, threshold=1e-4, **als):
    """The smallest rank in `ranks` whose best CP-ALS fit has relative error < threshold (None if none does), and
    the error at every rank tried (a failed fit below the returned rank is evidence of a higher rank, not proof)."""
    errors = {}
    for r in ranks:
        errors[int(r)] = cp_als(tensor, int(r), **als)[0]
        if errors[int(r)] < threshold:
            return int(r), errors
    return None, errors
