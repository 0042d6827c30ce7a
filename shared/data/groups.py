"""Finite groups as multiplication tables, word operations on them, and their representations.

A group of order n is its table: `table[a, b]` is the index of a*b, elements numbered 0..n-1 with 0 the identity.
Word operations w(a, b) (ab, ab^-1, aba^-1, [a, b], ...) are tables of the same shape, so every task here is
"predict table[a, b] from the pair (a, b)", trained on a fraction of the n^2 pairs.

Representations are found numerically from the left-regular representation L (L(g) e_h = e_{gh}): a random
Hermitian matrix averaged over the group commutes with every L(g), and its eigenspaces are irreducible copies
(Schur). Their characters name the irreducible representations; projectors onto the isotypic components of
R^n come from the characters exactly: P_chi = (d_chi / n) sum_g conj(chi(g)) L(g). Over R, a complex-type irrep and
its conjugate make one real component (the "basic self-conjugate" representations of the group-words paper; for
Z_m, the Fourier frequency pairs +-k).
"""
import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import torch


@dataclass(frozen=True)
class Group:
    name: str
    table: np.ndarray  # (n, n) int: table[a, b] = a*b
    elements: tuple = field(default=(), compare=False)  # printable labels, index order

    @property
    def order(self):
        return len(self.table)

    @property
    def inverse(self):
        return np.argmax(self.table == 0, axis=1)

    def is_abelian(self):
        return bool((self.table == self.table.T).all())


def _from_elements(name, elements, multiply):
    """Number `elements` (identity first) and tabulate `multiply`; checks closure."""
    index = {e: i for i, e in enumerate(elements)}
    table = np.array([[index[multiply(a, b)] for b in elements] for a in elements], dtype=np.int64)
    return Group(name, table, tuple(str(e) for e in elements))


def cyclic(m):
    """Z_m: addition modulo m (element k is the integer k)."""
    return Group(f"Z{m}", np.add.outer(np.arange(m), np.arange(m)) % m, tuple(str(k) for k in range(m)))


def _compose(p, q):  # (p*q)(i) = p(q(i)): apply q first
    return tuple(p[i] for i in q)


def _parity(p):
    return sum(1 for i, j in itertools.combinations(range(len(p)), 2) if p[i] > p[j]) % 2


def symmetric(n):
    """S_n: permutations of n points, composed as functions (identity first, then lexicographic order)."""
    return _from_elements(f"S{n}", list(itertools.permutations(range(n))), _compose)


def alternating(n):
    """A_n: the even permutations of S_n."""
    return _from_elements(f"A{n}", [p for p in itertools.permutations(range(n)) if _parity(p) == 0], _compose)


def dihedral(n):
    """D_n, the symmetries of a regular n-gon (order 2n): (r, s) is rotation r then, if s, a reflection;
    (r1, s1)(r2, s2) = (r1 + (-1)^s1 r2, s1 xor s2)."""
    elements = [(r, s) for s in (0, 1) for r in range(n)]
    return _from_elements(f"D{n}", elements, lambda x, y: ((x[0] + (-1) ** x[1] * y[0]) % n, x[1] ^ y[1]))


def quaternion():
    """Q_8 = {+-1, +-i, +-j, +-k}: its 2-dimensional irrep is of quaternionic type."""
    units = {"1": (1, 0, 0, 0), "i": (0, 1, 0, 0), "j": (0, 0, 1, 0), "k": (0, 0, 0, 1)}
    elements = [(sign, u) for u in units for sign in (1, -1)]

    def hamilton(x, y):
        (s, p), (t, q) = x, y
        a1, b1, c1, d1 = units[p]
        a2, b2, c2, d2 = units[q]
        prod = (a1 * a2 - b1 * b2 - c1 * c2 - d1 * d2, a1 * b2 + b1 * a2 + c1 * d2 - d1 * c2,
                a1 * c2 - b1 * d2 + c1 * a2 + d1 * b2, a1 * d2 + b1 * c2 - c1 * b2 + d1 * a2)
        for name, vec in units.items():
            for sign in (1, -1):
                if tuple(sign * v for v in vec) == prod:
                    return (s * t * sign, name)
        raise AssertionError("unit quaternions are closed under multiplication")

    return _from_elements("Q8", elements, hamilton)


def product(*groups):
    """The direct product G1 x G2 x ...: componentwise multiplication, index = mixed-radix number."""
    table = groups[0].table
    for g in groups[1:]:
        n, m = len(table), g.order
        table = (table[:, None, :, None] * m + g.table[None, :, None, :]).reshape(n * m, n * m)
    return Group("x".join(g.name for g in groups), table)


def by_name(name):
    """"Z23", "Z4xZ6", "S4", "A4", "D5", "Q8" -> the group."""
    if "x" in name:
        return product(*(by_name(part) for part in name.split("x")))
    kind, size = name[0], name[1:]
    makers = {"Z": cyclic, "S": symmetric, "A": alternating, "D": dihedral}
    if name == "Q8":
        return quaternion()
    if kind not in makers or not size.isdigit():
        raise ValueError(f"unknown group {name!r}: use Z<m>, S<n>, A<n>, D<n>, Q8 or products joined by 'x'")
    return makers[kind](int(size))


def word_table(group, word):
    """The table of the word operation w(a, b): letters a, b, their inverses A, B, powers as repeats.
    "ab" is the product, "aB" = ab^-1, "abA" = aba^-1, "abAB" = [a, b], "aab" = a^2 b."""
    if not word or set(word) - set("abAB"):
        raise ValueError(f"a word is a non-empty string over a, b, A (= a^-1), B (= b^-1); got {word!r}")
    n = group.order
    a, b = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    letters = {"a": a, "b": b, "A": group.inverse[a], "B": group.inverse[b]}
    out = letters[word[0]]
    for letter in word[1:]:
        out = group.table[out, letters[letter]]
    return out


def word_tensor(group, word):
    """delta[a, b, c] = 1 if w(a, b) = c: the 3-tensor a network learning the word must represent."""
    n = group.order
    t = np.zeros((n, n, n))
    table = word_table(group, word)
    t[np.arange(n)[:, None], np.arange(n)[None, :], table] = 1.0
    return t


def letter_counts(word):
    """(n_a, n_b): occurrences of a^+-1 and of b^+-1 in the word."""
    return sum(c in "aA" for c in word), sum(c in "bB" for c in word)


def split_pairs(order, train_fraction, seed):
    """A boolean mask over the order^2 pairs (row-major: pair index a*order + b) with round(fraction * order^2)
    training pairs, drawn by a generator seeded with `seed`."""
    total = order * order
    n_train = int(round(train_fraction * total))
    if not 0 < n_train <= total:
        raise ValueError(f"train_fraction {train_fraction} gives {n_train} of {total} pairs")
    chosen = torch.randperm(total, generator=torch.Generator().manual_seed(int(seed)))[:n_train]
    mask = torch.zeros(total, dtype=torch.bool)
    mask[chosen] = True
    return mask


def all_pairs(order):
    """(a, b) index tensors of every pair, row-major."""
    a, b = torch.meshgrid(torch.arange(order), torch.arange(order), indexing="ij")
    return a.reshape(-1), b.reshape(-1)


def regular_representation(group):
    """(n, n, n) float64: L[g] is the permutation matrix of left multiplication by g."""
    n = group.order
    left = np.zeros((n, n, n))
    left[np.arange(n)[:, None], group.table, np.arange(n)[None, :]] = 1.0
    return left


@dataclass
class Irrep:
    """One complex irreducible representation: its dimension, character (per element), Frobenius-Schur indicator
    (+1 real, 0 complex, -1 quaternionic type) and unitary matrices rho[g] (n, d, d)."""
    dim: int
    character: np.ndarray
    indicator: int
    matrices: np.ndarray


def _left_rows(group):
    """rows[g, i] = g^-1 i, so that (L(g) v)[i] = v[g^-1 i]: every L(g) as an index permutation."""
    return group.table[group.inverse]


def _group_matrix(group, coefficients):
    """sum_g c_g L(g) as a dense matrix: entry (i, j) is c at g = i j^-1."""
    return coefficients[group.table[:, group.inverse]]


def irreps(group, seed=0, tol=1e-6):
    """Every complex irrep of the group, trivial first, then by dimension (see the module docstring)."""
    n = group.order
    rows = _left_rows(group)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    x = x + x.conj().T
    h = sum(x[np.ix_(r, r)] for r in rows)  # sum_g L(g) X L(g)^T commutes with every L(g)
    values, vectors = np.linalg.eigh(h)
    found = {}
    start = 0
    for i in range(1, n + 1):  # cluster equal eigenvalues: each cluster is one irreducible copy
        if i == n or values[i] - values[i - 1] > tol * max(1.0, abs(values).max()):
            q = vectors[:, start:i]
            matrices = np.einsum("ia,gib->gab", q.conj(), q[rows])  # rho(g) = Q^H L(g) Q
            chars = np.einsum("gaa->g", matrices)
            found.setdefault(tuple(np.round(chars, 6)), (q.shape[1], chars, matrices))
            start = i
    squares = np.arange(n)[group.table[np.arange(n), np.arange(n)]]
    result = [Irrep(d, chars, int(round(float(np.real(chars[squares].mean())))), matrices)
              for d, chars, matrices in found.values()]
    if sum(r.dim ** 2 for r in result) != n:
        raise RuntimeError(f"{group.name}: irreps found have sum d^2 = {sum(r.dim ** 2 for r in result)} != {n}; "
                           "the eigenvalue clusters merged, try another seed")
    result.sort(key=lambda r: (not np.allclose(r.character, 1), r.dim, -r.indicator, tuple(np.angle(r.character))))
    return result


@dataclass
class RealComponent:
    """An isotypic component of R^n under the regular representation (one real irreducible type): `projector` is
    the orthogonal projector onto it, `dim` its dimension (sum of d^2 of the complex irreps it holds), `irrep_dim`
    the complex dimension d, `kind` "real" | "complex" | "quaternionic", `label` a readable name."""
    label: str
    kind: str
    irrep_dim: int
    dim: int
    projector: np.ndarray
    members: list


def real_components(group, seed=0):
    """The real isotypic decomposition R^n = sum of components (projectors mutually orthogonal, summing to I).
    For Z_m the components are the frequencies k = 0..floor(m/2) (cos and sin of 2 pi k a / m), labelled "k=..."."""
    n = group.order
    found = irreps(group, seed)
    used, components = set(), []
    for i, r in enumerate(found):
        if i in used:
            continue
        members = [i]
        if r.indicator == 0:  # pair with the conjugate character
            j = next(j for j, s in enumerate(found) if j not in used and j != i and np.allclose(s.character, r.character.conj()))
            members.append(j)
        used.update(members)
        p = sum(_group_matrix(group, (found[k].dim / n) * found[k].character.conj()) for k in members)
        kind = {1: "real", 0: "complex", -1: "quaternionic"}[r.indicator]
        components.append(RealComponent("", kind, r.dim, sum(found[k].dim ** 2 for k in members), np.real(p), members))
    if group.name.startswith("Z") and "x" not in group.name:  # label cyclic components by frequency
        m = n
        for c in components:
            k = int(round(np.angle(found[c.members[0]].character[1]) * m / (2 * math.pi))) % m
            c.label = f"k={min(k, m - k)}"
        components.sort(key=lambda c: int(c.label[2:]))
    else:
        for i, c in enumerate(components):
            c.label = "trivial" if i == 0 else f"{c.kind}-{c.irrep_dim}d-{i}"
    return components
