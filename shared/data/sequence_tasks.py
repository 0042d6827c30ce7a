"""State-tracking tasks as deterministic finite automata, and seeded sequence samplers.

Every task here is a DFA with states 0..m-1, start state 0 and a table next[state, token]:

    modadd   tokens x in Z_m,               s_t = s_{t-1} + x_t mod m          (m = 2 is parity)
    modarith tokens (op, a), op in +,-,*:   s_t = s_{t-1} op_t a_t mod m       (a left-to-right fold)
    fsm      a random table over m states and m tokens, redrawn until every state is reachable from the
             start and two tokens do not commute (so no commuting, i.e. abelian, model can represent it)

A sequence's label at step t is the state after reading tokens 1..t, so one sequence of length T carries the
answer for every prefix length 1..T.
"""
import re
from dataclasses import dataclass

import numpy as np
import torch

KINDS = ("modadd", "modarith", "fsm")
OPS = ("+", "-", "*")


@dataclass(frozen=True)
class Task:
    name: str
    kind: str
    m: int
    table: tuple  # next[state][token] as nested tuples, so a Task is hashable and JSON-ready

    @property
    def n_states(self):
        return self.m

    @property
    def vocab(self):
        return len(self.table[0])

    def next_table(self, device="cpu"):
        return torch.tensor(self.table, dtype=torch.long, device=device)


def make_task(kind, m, seed=0):
    """The DFA of a task; `seed` only matters for kind 'fsm' (it fixes the random table)."""
    if kind not in KINDS:
        raise ValueError(f"task kind must be one of {KINDS}, got {kind!r}")
    if m < 2:
        raise ValueError(f"a task needs m >= 2 states, got {m}")
    states = np.arange(m)[:, None]
    if kind == "modadd":
        table = (states + np.arange(m)[None, :]) % m
    elif kind == "modarith":
        a = np.arange(m)[None, :]
        table = np.concatenate([(states + a) % m, (states - a) % m, (states * a) % m], axis=1)
    else:
        table = _random_fsm(m, seed)
    name = "parity" if (kind, m) == ("modadd", 2) else f"{kind}{m}"
    return Task(name=name, kind=kind, m=m, table=tuple(map(tuple, table.tolist())))


def parse_task(name, fsm_seed=0):
    """'parity', 'modadd5', 'fsm10', 'modarith5' -> Task."""
    if name == "parity":
        return make_task("modadd", 2)
    match = re.fullmatch(r"(modadd|modarith|fsm)([0-9]+)", name)
    if not match:
        raise ValueError(f"task name must be parity or modadd<m> / modarith<m> / fsm<m>, got {name!r}")
    return make_task(match[1], int(match[2]), seed=fsm_seed)


def _random_fsm(m, seed, max_draws=1000):
    rng = np.random.default_rng(seed)
    for _ in range(max_draws):
        table = rng.integers(0, m, size=(m, m))
        if len(reachable(table)) == m and not is_commutative(table):
            return table
    raise RuntimeError(f"no usable random FSM with {m} states after {max_draws} draws")


def reachable(table, start=0):
    """States reachable from `start`."""
    table = np.asarray(table)
    seen, frontier = {start}, [start]
    while frontier:
        nxt = {int(s) for s in table[frontier].ravel()} - seen
        seen |= nxt
        frontier = list(nxt)
    return seen


def is_commutative(table):
    """True when every pair of token maps commutes: next[next[s, a], b] == next[next[s, b], a] for all s, a, b."""
    table = np.asarray(table)
    ab = table[table]  # ab[s, a, b] = next[next[s, a], b]
    return bool((ab == ab.transpose(0, 2, 1)).all())


def run_dfa(task, tokens):
    """States (B, T) after each token of `tokens` (B, T), starting from state 0."""
    table = task.next_table(tokens.device)
    state = torch.zeros(tokens.shape[0], dtype=torch.long, device=tokens.device)
    states = torch.empty_like(tokens)
    for t in range(tokens.shape[1]):
        state = table[state, tokens[:, t]]
        states[:, t] = state
    return states


def sample(task, batch, length, gen):
    """`batch` sequences of `length` uniform random tokens and their per-step states, from torch Generator `gen`."""
    tokens = torch.randint(task.vocab, (batch, length), generator=gen)
    return tokens, run_dfa(task, tokens)


def train_length(min_length, max_length, gen):
    """A training batch's length, uniform in [min_length, max_length] (one length per batch)."""
    return int(torch.randint(min_length, max_length + 1, (1,), generator=gen))
