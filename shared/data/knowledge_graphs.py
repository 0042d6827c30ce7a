"""Knowledge graphs as integer triples: readers of the tab-separated (head, relation, tail) splits that PyKEEN ships
(UMLS, Kinships, Nations) and that Bordes et al. (2013) published (FB15k, WN18), and a generated family graph with
planted composition rules (for rule mining, where the true rules are known).

A loaded graph is {"train", "valid", "test": int64 (N, 3) arrays of (head, relation, tail) ids, "entities",
"relations": JSON lists of names}; ids index the sorted names of every split together, so the vocabulary does not
depend on the order of the files.
"""
import io
import json
import tarfile

import numpy as np

TRIPLE_KEYS = ("train", "valid", "test")
TRIPLE_METADATA_KEYS = ("entities", "relations")


def _read_tsv(text, where):
    rows = [line.split("\t") for line in text.splitlines() if line.strip()]
    bad = [i for i, row in enumerate(rows) if len(row) != 3]
    if bad:
        raise ValueError(f"{where}: line {bad[0] + 1} is not 'head<TAB>relation<TAB>tail'")
    return [tuple(part.strip() for part in row) for row in rows]


def encode_splits(splits):
    """{split: [(h, r, t) names]} -> the loaded-graph dict (ids over the sorted names of all splits)."""
    entities = sorted({e for rows in splits.values() for h, _, t in rows for e in (h, t)})
    relations = sorted({r for rows in splits.values() for _, r, _ in rows})
    e_id, r_id = {e: i for i, e in enumerate(entities)}, {r: i for i, r in enumerate(relations)}
    out = {split: np.array([(e_id[h], r_id[r], e_id[t]) for h, r, t in rows], dtype=np.int64).reshape(-1, 3)
           for split, rows in splits.items()}
    return {**out, "entities": json.dumps(entities), "relations": json.dumps(relations)}


def load_triple_files(paths):
    """Registry loader: {"train", "valid", "test": path of a TSV file}."""
    return encode_splits({split: _read_tsv(paths[split].read_text(encoding="utf-8"), paths[split])
                          for split in TRIPLE_KEYS})


def triple_archive_loader(members):
    """Registry loader for a tar archive ({"archive": path}) holding the three splits at `members` {split: name}."""
    def load(paths):
        with tarfile.open(paths["archive"]) as archive:
            texts = {split: io.TextIOWrapper(archive.extractfile(name), encoding="utf-8").read()
                     for split, name in members.items()}
        return encode_splits({split: _read_tsv(texts[split], f"{paths['archive']}:{members[split]}")
                              for split in TRIPLE_KEYS})
    return load


FAMILY_RELATIONS = ("parent_of", "child_of", "sibling_of", "grandparent_of", "grandchild_of", "uncle_of", "nephew_of")
# head: (body1, body2) with body1(a, b) and body2(b, c) => head(a, c). The last two are order-sensitive: the reversed
# bodies mean something else (parent_of o sibling_of is parent_of, sibling_of o child_of is child_of).
FAMILY_RULES = {"grandparent_of": ("parent_of", "parent_of"), "grandchild_of": ("child_of", "child_of"),
                "uncle_of": ("sibling_of", "parent_of"), "nephew_of": ("child_of", "sibling_of")}


def entities_unseen_in_training(splits):
    """{split: entities of valid / test that no training triple names}, for rows of (head, relation, tail) ids or
    names. An entity training never saw keeps its random initial embedding, so ranking it measures nothing."""
    seen = {e for h, _, t in splits["train"] for e in (h, t)}
    return {split: sorted({e for h, _, t in splits[split] for e in (h, t)} - seen) for split in ("valid", "test")}


def family_graph(n_families, generations, children, seed):
    """Triples (name lists as in encode_splits' input) of `n_families` disjoint family trees: each couple-free
    person of generation g < generations - 1 has `children` children. Relations FAMILY_RELATIONS; every fact that
    the rules FAMILY_RULES imply is in the graph (the rules are exact), uncle_of and nephew_of included."""
    rng = np.random.default_rng(seed)
    parent, person = {}, 0
    for _ in range(n_families):
        generation = [person]
        person += 1
        for _ in range(generations - 1):
            nxt = []
            for p in generation:
                for _ in range(int(rng.integers(children[0], children[1] + 1))):
                    parent[person] = p
                    nxt.append(person)
                    person += 1
            generation = nxt
    facts = set()
    for c, p in parent.items():
        facts |= {(p, "parent_of", c), (c, "child_of", p)}
        if p in parent:
            facts |= {(parent[p], "grandparent_of", c), (c, "grandchild_of", parent[p])}
    for a, pa in parent.items():
        facts |= {(a, "sibling_of", b) for b, pb in parent.items() if a != b and pa == pb}
    for a, r, b in list(facts):
        if r == "sibling_of":
            facts |= {(a, "uncle_of", c) for c, p in parent.items() if p == b}
            facts |= {(c, "nephew_of", a) for c, p in parent.items() if p == b}
    return sorted((f"p{h}", r, f"p{t}") for h, r, t in facts)


def split_triples(rows, fractions, seed):
    """Shuffle rows with `seed` and cut them into train/valid/test by `fractions` (train, valid)."""
    order = np.random.default_rng(seed).permutation(len(rows))
    n_train, n_valid = int(fractions[0] * len(rows)), int(fractions[1] * len(rows))
    pick = [rows[i] for i in order]
    return {"train": pick[:n_train], "valid": pick[n_train:n_train + n_valid], "test": pick[n_train + n_valid:]}
