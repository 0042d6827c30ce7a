"""The library's imports point down its wings (shared/__init__.py), form no cycle, and no API name is defined twice."""
import ast
from collections import defaultdict
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
# wing -> wings it may import (besides itself and the leaf shared.stats)
ALLOWED = {"io": set(), "data": {"io"}, "nn": {"io"}, "train": {"io", "nn", "data"},
           "pipeline": {"io", "data", "nn", "train"}}


def modules():
    for path in sorted(SHARED.rglob("*.py")):
        if "templates" in path.parts:
            continue
        name = ".".join(path.relative_to(SHARED.parent).with_suffix("").parts)
        yield name.removesuffix(".__init__"), path


def imports(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shared"):
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name.startswith("shared"))


def graph():
    known = dict(modules())
    edges = defaultdict(set)
    for name, path in known.items():
        edges[name] |= {m for m in imports(path) if m in known and m != name}
    return edges


def wing(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else None


def test_wings_import_only_downwards():
    for module, targets in graph().items():
        w = wing(module)
        for target in targets:
            t = wing(target)
            if w and t and t != w:
                assert t in ALLOWED[w], f"{module} imports {target}: {w} may import only {sorted(ALLOWED[w])}"


def test_no_import_cycles():
    edges, state = graph(), {}

    def visit(node, path):
        state[node] = "open"
        for nxt in edges[node]:
            assert state.get(nxt) != "open", " -> ".join([*path, node, nxt])
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = "done"

    for node in list(edges):
        if node not in state:
            visit(node, [])


def test_no_public_name_is_defined_in_two_modules():
    owners = defaultdict(list)
    for name, path in modules():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_") and node.name != "main":
                owners[node.name].append(name)
    twice = {n: m for n, m in owners.items() if len(m) > 1}
    assert not twice, twice
