"""Atomic file writes (a reader, or a rerun after a crash, never sees a half-written file), strict JSON and strict
YAML (a duplicate key or a syntax error is an error naming the file, line and column)."""
import functools
import json
import math
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path):
    """Yield a temporary path beside `path`; it replaces `path` only if the block finishes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; the result should be as readable as any new file
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path, text):
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path, obj):
    """Strict JSON: a non-finite float is written as the string "NaN", "Infinity" or "-Infinity", never as the bare
    token that only Python's json module reads."""
    write_text(path, json.dumps(strict_json(obj), indent=2, sort_keys=True, allow_nan=False) + "\n")


def strict_json(value):
    """`value` as plain JSON data: numpy / torch values as lists and scalars, paths as strings, non-finite floats
    as strings."""
    if hasattr(value, "tolist"):  # numpy / torch scalars and arrays
        value = value.tolist()
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def read_json(path):
    """Strict JSON: a bare NaN or Infinity token is an error naming the file."""
    def refuse(token):
        raise ValueError(f"{path}: not strict JSON: bare {token} (write_json stores non-finite numbers as strings)")

    return json.loads(Path(path).read_text(), parse_constant=refuse)


class YamlError(ValueError):
    """A YAML file that does not parse, or that repeats a key; the message is one line: file:line:column: problem."""


def load_yaml(text, source="<string>"):
    """YAML through the safe loader (libyaml's parser when present, several times faster), with duplicate keys
    refused: YAML says a mapping's keys are unique, and PyYAML otherwise keeps the last one silently."""
    import yaml

    try:
        return yaml.load(text, Loader=_strict_loader())
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = " ".join(p for p in (error.context, error.problem) if p)
        raise YamlError(f"{where}: YAML error: {problem}") from None
    except yaml.YAMLError as error:
        raise YamlError(f"{source}: YAML error: {error}") from None


def read_yaml(path):
    """load_yaml of a file; errors name the file."""
    return load_yaml(Path(path).read_text(), source=str(path))


@functools.cache
def _strict_loader():
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):
        pass

    def construct_mapping(loader, node, deep=False):
        loader.flatten_mapping(node)
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # a list or mapping as a key
                raise yaml.constructor.ConstructorError(None, None, "a mapping key must be a scalar",
                                                        key_node.start_mark) from None
            if duplicate:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return base.construct_mapping(loader, node, deep=deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader
