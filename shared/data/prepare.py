"""One safetensors file per dataset (never pickle), written byte-for-byte reproducibly, and its reader."""
import json
import struct
from pathlib import Path

import numpy as np

from shared.data.fetch import _fetch_verified
from shared.data.registry import REGISTRY
from shared.data.stories import WordTokenizer
from shared.io.files import atomic_path

ARRAY_KEYS = ("x_train", "y_train", "x_test", "y_test")
TEXT_ARRAY_KEYS = ("train_tokens", "val_tokens")
TEXT_METADATA_KEYS = ("vocab", "n_train_stories", "n_val_stories")


def load(name, cache_dir=None):
    """Images: {x_train, y_train, x_test, y_test} numpy arrays; text: {train_tokens, val_tokens} int32
    streams plus vocab (tokenizer JSON), n_train_stories, n_val_stories. Both add `sources` {role: {path, sha256}}."""
    found = _fetch_verified(name, cache_dir)
    arrays = REGISTRY[name].loader({role: path for role, (path, _) in found.items()})
    (_check_text if REGISTRY[name].kind == "text" else _check_images)(name, arrays)
    arrays["sources"] = {role: {"path": str(path), "sha256": digest} for role, (path, digest) in found.items()}
    return arrays


def _check_images(name, arrays):
    shape = REGISTRY[name].image_shape
    for split in ("train", "test"):
        x, y = arrays[f"x_{split}"], arrays[f"y_{split}"]
        if x.dtype != np.uint8 or x.shape[1:] != shape:
            raise ValueError(f"{name}: x_{split} should be (N, {', '.join(map(str, shape))}) uint8, "
                             f"got {x.shape} {x.dtype}")
        if y.dtype != np.int64 or y.shape != (len(x),):
            raise ValueError(f"{name}: y_{split} should be ({len(x)},) int64, got {y.shape} {y.dtype}")


def _check_text(name, arrays):
    vocab_size = WordTokenizer.from_json(arrays["vocab"]).vocab_size
    for key in TEXT_ARRAY_KEYS:
        tokens = arrays[key]
        if tokens.dtype != np.int32 or tokens.ndim != 1 or len(tokens) == 0:
            raise ValueError(f"{name}: {key} should be a non-empty 1-d int32 stream, got {tokens.shape} {tokens.dtype}")
        if tokens.min() < 0 or tokens.max() >= vocab_size:
            raise ValueError(f"{name}: {key} has ids outside 0..{vocab_size - 1}")


def prepare(name, out_path, cache_dir=None):
    data = load(name, cache_dir)
    metadata = {"dataset": name, "licence": REGISTRY[name].licence,
                "sources": json.dumps(data["sources"], sort_keys=True)}
    keys = ARRAY_KEYS
    if REGISTRY[name].kind == "text":
        keys = TEXT_ARRAY_KEYS
        metadata.update({key: str(data[key]) for key in TEXT_METADATA_KEYS})
    with atomic_path(out_path) as tmp:
        write_safetensors({k: np.ascontiguousarray(data[k]) for k in keys}, tmp, metadata)
    return Path(out_path)


def write_safetensors(arrays, path, metadata):
    """safetensors keeps metadata in a hash map whose order changes from run to run; the header is
    re-emitted with sorted keys so the same data always gives the same bytes."""
    from safetensors.numpy import save
    blob = memoryview(save(arrays, metadata=metadata))
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.dumps(json.loads(bytes(blob[8:8 + n])), sort_keys=True, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)  # the format allows trailing spaces; they keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.write(blob[8 + n:])


def read_prepared(path):
    """Return (arrays, metadata) from a `prepare`d file; metadata values are strings as stored."""
    from safetensors import safe_open
    from safetensors.numpy import load_file
    with safe_open(str(path), framework="np") as f:
        metadata = dict(f.metadata() or {})
    return load_file(str(path)), metadata


