"""shared.data.sequence_tasks: the task automata against their definitions, and the seeded samplers."""
import numpy as np
import pytest
import torch

from shared.data.sequence_tasks import (
    KINDS,
    OPS,
    Task,
    is_commutative,
    make_task,
    parse_task,
    reachable,
    run_dfa,
    sample,
    train_length,
)
from shared.io.runtime import generator


def _run_by_hand(table, tokens):
    """States after each token, a plain Python loop over the table from state 0."""
    out = []
    for row in tokens.tolist():
        s, states = 0, []
        for tok in row:
            s = table[s][tok]
            states.append(s)
        out.append(states)
    return torch.tensor(out, dtype=torch.long)


# ---------------------------------------------------------------- tables
@pytest.mark.parametrize("m", [2, 3, 5, 10])
def test_modadd_table(m):
    task = make_task("modadd", m)
    assert task.kind == "modadd" and task.m == task.n_states == m and task.vocab == m
    for s in range(m):
        for x in range(m):
            assert task.table[s][x] == (s + x) % m
    assert task.next_table().shape == (m, m) and task.next_table().dtype == torch.long


def test_parity_is_modadd2():
    task = make_task("modadd", 2)
    assert task.name == "parity"
    assert task.table == ((0, 1), (1, 0))
    assert parse_task("parity") == task
    assert make_task("modadd", 3).name == "modadd3"


@pytest.mark.parametrize("m", [2, 5, 7])
def test_modarith_table(m):
    task = make_task("modarith", m)
    assert task.name == f"modarith{m}" and task.vocab == len(OPS) * m and task.n_states == m
    ops = {"+": lambda s, a: (s + a) % m, "-": lambda s, a: (s - a) % m, "*": lambda s, a: (s * a) % m}
    for i, op in enumerate(OPS):
        for s in range(m):
            for a in range(m):
                assert task.table[s][i * m + a] == ops[op](s, a), (op, s, a)


@pytest.mark.parametrize("m", [2, 3, 5, 10, 25])
def test_fsm_is_reachable_and_non_commutative(m):
    task = make_task("fsm", m, seed=0)
    assert task.name == f"fsm{m}" and task.vocab == task.n_states == m
    table = np.array(task.table)
    assert table.shape == (m, m) and table.min() >= 0 and table.max() < m
    assert reachable(task.table) == set(range(m))
    assert not is_commutative(task.table)
    # the same by hand: some state and pair of tokens whose order matters
    assert any(table[table[s, a], b] != table[table[s, b], a] for s in range(m) for a in range(m) for b in range(m))


def test_fsm_seed_fixes_the_table():
    assert make_task("fsm", 5, seed=3) == make_task("fsm", 5, seed=3)
    assert parse_task("fsm5", fsm_seed=3) == make_task("fsm", 5, seed=3)
    tables = {make_task("fsm", 5, seed=s).table for s in range(5)}
    assert len(tables) > 1


def test_seed_does_not_matter_for_fixed_tasks():
    assert make_task("modadd", 5, seed=0) == make_task("modadd", 5, seed=9)
    assert make_task("modarith", 5, seed=0) == make_task("modarith", 5, seed=9)


def test_task_is_hashable_and_plain():
    task = make_task("fsm", 5)
    assert isinstance(task, Task) and hash(task) == hash(make_task("fsm", 5))
    assert all(isinstance(s, int) for row in task.table for s in row)  # JSON-ready, not numpy ints


def test_is_commutative():
    assert is_commutative(make_task("modadd", 5).table)
    assert is_commutative(make_task("modadd", 2).table)
    assert not is_commutative(make_task("modarith", 5).table)  # e.g. +1 then *0 differs from *0 then +1
    assert is_commutative([[0, 0], [1, 1]])  # both tokens are the identity map
    assert not is_commutative([[0, 1], [0, 1]])  # token 0 resets to 0, token 1 sets 1: order matters


def test_reachable():
    assert reachable([[0, 1, 1], [1, 2, 1], [2, 2, 2]]) == {0, 1, 2}
    assert reachable([[0, 0, 2], [1, 1, 1], [2, 2, 2]]) == {0, 2}
    assert reachable([[1, 1], [1, 1]], start=1) == {1}


# ---------------------------------------------------------------- running and sampling
@pytest.mark.parametrize("name", ["parity", "modadd5", "modarith3", "fsm5"])
def test_run_dfa_matches_a_python_loop(name):
    task = parse_task(name)
    tokens = torch.randint(task.vocab, (6, 40), generator=generator(0))
    states = run_dfa(task, tokens)
    assert states.shape == tokens.shape and states.dtype == torch.long
    assert torch.equal(states, _run_by_hand(task.table, tokens))


def test_parity_states_are_the_running_count_of_ones():
    task = parse_task("parity")
    tokens = torch.randint(2, (4, 50), generator=generator(1))
    assert torch.equal(run_dfa(task, tokens), tokens.cumsum(1) % 2)


def test_modadd_states_are_the_running_sum():
    task = parse_task("modadd7")
    tokens = torch.randint(7, (4, 50), generator=generator(2))
    assert torch.equal(run_dfa(task, tokens), tokens.cumsum(1) % 7)


def test_sample_is_seeded():
    task = parse_task("fsm5")
    tokens_a, states_a = sample(task, 8, 30, generator(7))
    tokens_b, states_b = sample(task, 8, 30, generator(7))
    tokens_c, _ = sample(task, 8, 30, generator(8))
    assert torch.equal(tokens_a, tokens_b) and torch.equal(states_a, states_b)
    assert not torch.equal(tokens_a, tokens_c)
    assert tokens_a.shape == states_a.shape == (8, 30)
    assert tokens_a.min() >= 0 and tokens_a.max() < task.vocab
    assert torch.equal(states_a, run_dfa(task, tokens_a))


def test_sample_does_not_depend_on_the_global_rng():
    task = parse_task("modadd5")
    torch.manual_seed(0)
    a = sample(task, 4, 10, generator(3))[0]
    torch.manual_seed(1)
    torch.rand(100)
    assert torch.equal(a, sample(task, 4, 10, generator(3))[0])


def test_train_length_in_range_and_seeded():
    lengths = [train_length(2, 10, generator(5)) for _ in range(3)]
    assert len(set(lengths)) == 1  # same seed, same first draw
    g = generator(6)
    draws = [train_length(2, 10, g) for _ in range(500)]
    assert min(draws) == 2 and max(draws) == 10 and all(isinstance(d, int) for d in draws)


# ---------------------------------------------------------------- names and errors
@pytest.mark.parametrize("name, kind, m", [("parity", "modadd", 2), ("modadd5", "modadd", 5), ("fsm10", "fsm", 10),
                                           ("modarith5", "modarith", 5), ("modadd50", "modadd", 50)])
def test_parse_task(name, kind, m):
    task = parse_task(name)
    assert (task.name, task.kind, task.m) == (name, kind, m)


@pytest.mark.parametrize("name", ["foo", "modadd", "fsm", "modadd5x", "Parity", "modadd-5", " modadd5"])
def test_parse_task_rejects_bad_names(name):
    with pytest.raises(ValueError, match="task name"):
        parse_task(name)


@pytest.mark.parametrize("name", ["modadd1", "modadd0", "fsm1"])
def test_parse_task_rejects_too_few_states(name):
    with pytest.raises(ValueError, match="m >= 2"):
        parse_task(name)


@pytest.mark.parametrize("m", [1, 0, -3])
def test_make_task_rejects_m_below_2(m):
    with pytest.raises(ValueError, match="m >= 2"):
        make_task("modadd", m)


@pytest.mark.parametrize("kind", ["parity", "modmul", "", "FSM"])
def test_make_task_rejects_unknown_kinds(kind):
    assert kind not in KINDS
    with pytest.raises(ValueError, match="task kind"):
        make_task(kind, 5)
