"""shared.data.groups: tables are groups, words evaluate as written, irreps are homomorphisms, components split R^n."""
import itertools

import numpy as np
import pytest

from shared.data.groups import (
    all_pairs,
    by_name,
    irreps,
    letter_counts,
    real_components,
    regular_representation,
    split_pairs,
    word_table,
)

GROUPS = ["Z1", "Z5", "Z6", "Z2xZ3", "S3", "D4", "D5", "Q8", "A4", "S4"]
ORDERS = {"Z1": 1, "Z5": 5, "Z6": 6, "Z2xZ3": 6, "S3": 6, "D4": 8, "D5": 10, "Q8": 8, "A4": 12, "S4": 24}
# (dimension, Frobenius-Schur indicator) of every complex irrep, from the character tables
IRREPS = {"Z5": [(1, 1)] + [(1, 0)] * 4, "S3": [(1, 1), (1, 1), (2, 1)], "D4": [(1, 1)] * 4 + [(2, 1)],
          "Q8": [(1, 1)] * 4 + [(2, -1)], "A4": [(1, 1), (1, 0), (1, 0), (3, 1)],
          "S4": [(1, 1), (1, 1), (2, 1), (3, 1), (3, 1)], "D5": [(1, 1), (1, 1), (2, 1), (2, 1)]}


@pytest.mark.parametrize("name", GROUPS)
def test_table_is_a_group(name):
    g = by_name(name)
    t, n = g.table, g.order
    assert n == ORDERS[name]
    assert (t[0] == np.arange(n)).all() and (t[:, 0] == np.arange(n)).all()  # 0 is the identity
    assert all(sorted(row) == list(range(n)) for row in t) and all(sorted(col) == list(range(n)) for col in t.T)
    for a, b, c in itertools.product(range(n), repeat=3):
        assert t[t[a, b], c] == t[a, t[b, c]]
    assert (t[np.arange(n), g.inverse] == 0).all()


def test_abelian_and_not():
    assert by_name("Z2xZ3").is_abelian() and by_name("Z6").is_abelian()
    assert not any(by_name(n).is_abelian() for n in ("S3", "D4", "Q8", "A4"))


def test_words_evaluate_letter_by_letter():
    g = by_name("S3")
    t, inv = g.table, g.inverse
    assert (word_table(g, "ab") == t).all()
    for a, b in itertools.product(range(6), repeat=2):
        assert word_table(g, "aB")[a, b] == t[a, inv[b]]
        assert word_table(g, "abA")[a, b] == t[t[a, b], inv[a]]
        assert word_table(g, "abAB")[a, b] == t[t[t[a, b], inv[a]], inv[b]]
        assert word_table(g, "aab")[a, b] == t[t[a, a], b]
    assert (word_table(by_name("Z5"), "abAB") == 0).all()  # commutators vanish in an abelian group
    assert letter_counts("abAB") == (2, 2) and letter_counts("aab") == (2, 1)
    with pytest.raises(ValueError, match="non-empty string"):
        word_table(g, "ac")


def test_unknown_group_name_is_rejected():
    with pytest.raises(ValueError, match="unknown group"):
        by_name("T7")


def test_split_is_seeded_and_sized():
    a = split_pairs(23, 0.4, seed=3)
    assert a.sum() == round(0.4 * 529) and (a == split_pairs(23, 0.4, seed=3)).all()
    assert not (a == split_pairs(23, 0.4, seed=4)).all()
    x, y = all_pairs(4)
    assert (x * 4 + y == np.arange(16)).all()
    with pytest.raises(ValueError, match="train_fraction"):
        split_pairs(5, 0.0, 0)


@pytest.mark.parametrize("name", sorted(IRREPS))
def test_irreps_are_the_character_table(name):
    g = by_name(name)
    found = irreps(g)
    assert [(r.dim, r.indicator) for r in found] == IRREPS[name]
    n = g.order
    for r in found:
        for a, b in itertools.product(range(n), repeat=2):  # homomorphism
            np.testing.assert_allclose(r.matrices[a] @ r.matrices[b], r.matrices[g.table[a, b]], atol=1e-10)
        np.testing.assert_allclose(r.matrices[0], np.eye(r.dim), atol=1e-10)
    chars = np.stack([r.character for r in found])
    np.testing.assert_allclose(chars @ chars.conj().T / n, np.eye(len(found)), atol=1e-10)  # orthonormal characters


@pytest.mark.parametrize("name", ["Z5", "Z6", "S3", "Q8", "A4", "S4", "Z2xZ3"])
def test_real_components_are_complementary_invariant_projectors(name):
    g = by_name(name)
    comps = real_components(g)
    left = regular_representation(g)
    np.testing.assert_allclose(sum(c.projector for c in comps), np.eye(g.order), atol=1e-10)
    for c in comps:
        p = c.projector
        np.testing.assert_allclose(p @ p, p, atol=1e-10)
        np.testing.assert_allclose(p, p.T, atol=1e-10)
        assert round(np.trace(p)) == c.dim
        for mat in left:  # invariant: P commutes with every left translation
            np.testing.assert_allclose(mat @ p, p @ mat, atol=1e-10)
    assert comps[0].dim == 1  # the trivial component (constants) comes first


def test_cyclic_components_are_fourier_frequencies():
    m = 7
    comps = real_components(by_name(f"Z{m}"))
    assert [c.label for c in comps] == ["k=0", "k=1", "k=2", "k=3"]
    a = np.arange(m)
    for k, c in enumerate(comps):
        cos = np.cos(2 * np.pi * k * a / m)
        np.testing.assert_allclose(c.projector @ cos, cos, atol=1e-10)
    assert [c.kind for c in real_components(by_name("A4"))] == ["real", "complex", "real"]
    assert real_components(by_name("Q8"))[-1].kind == "quaternionic"
