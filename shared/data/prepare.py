"""One safetensors file per dataset (never pickle), written byte-for-byte reproducibly, and its reader, which
re-checks what the writer recorded."""
import hashlib
import json
import struct
from pathlib import Path

import numpy as np

from shared.data.fetch import DataCorrupted, _fetch_verified, check_unchanged
from shared.data.knowledge_graphs import TRIPLE_KEYS, TRIPLE_METADATA_KEYS
from shared.data.registry import REGISTRY
from shared.data.stories import WordTokenizer
from shared.io.files import atomic_path

ARRAY_KEYS = ("x_train", "y_train", "x_test", "y_test")
TEXT_ARRAY_KEYS = ("train_tokens", "val_tokens")
TEXT_METADATA_KEYS = ("vocab", "n_train_stories", "n_val_stories")
DIGEST_KEY = "content_sha256"  # metadata key written by write_safetensors, checked and dropped by read_prepared


def load(name, cache_dir=None):
    """Images: {x_train, y_train, x_test, y_test} numpy arrays; text: {train_tokens, val_tokens} int32
    streams plus vocab (tokenizer JSON), n_train_stories, n_val_stories. Both add `sources` {role: {path, sha256}}."""
    dataset = REGISTRY[name]
    found = _fetch_verified(name, cache_dir)
    try:
        arrays = dataset.loader({role: path for role, (path, _, _) in found.items()})
    except Exception:
        check_unchanged(name, found, cache_dir)  # a file swapped mid-read explains a failure better than the loader
        raise
    check_unchanged(name, found, cache_dir)
    {"text": _check_text, "triples": _check_triples}.get(dataset.kind, _check_images)(name, arrays)
    arrays["sources"] = {role: _source(path, digest, dataset.files[role]) for role, (path, digest, _) in found.items()}
    return arrays


def _source(path, digest, remote):
    # A copy verified by its gunzipped payload (Debian's re-gzipped files) records that pin too, so that
    # read_prepared can tell it from an unpinned source.
    if digest == remote.sha256:
        return {"path": str(path), "sha256": digest}
    return {"path": str(path), "sha256": digest, "raw_sha256": remote.raw_sha256}


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


def _check_triples(name, arrays):
    n_entities, n_relations = (len(json.loads(arrays[key])) for key in TRIPLE_METADATA_KEYS)
    for key in TRIPLE_KEYS:
        triples = arrays[key]
        if triples.dtype != np.int64 or triples.ndim != 2 or triples.shape[1] != 3 or len(triples) == 0:
            raise ValueError(f"{name}: {key} should be non-empty (N, 3) int64 triples, got {triples.shape} {triples.dtype}")
        if triples.min() < 0 or triples[:, [0, 2]].max() >= n_entities or triples[:, 1].max() >= n_relations:
            raise ValueError(f"{name}: {key} has ids outside the {n_entities} entities / {n_relations} relations")


def prepare(name, out_path, cache_dir=None):
    data = load(name, cache_dir)
    metadata = {"dataset": name, "licence": REGISTRY[name].licence,
                "sources": json.dumps(data["sources"], sort_keys=True)}
    keys = ARRAY_KEYS
    if REGISTRY[name].kind == "text":
        keys = TEXT_ARRAY_KEYS
        metadata.update({key: str(data[key]) for key in TEXT_METADATA_KEYS})
    elif REGISTRY[name].kind == "triples":
        keys = TRIPLE_KEYS
        metadata.update({key: data[key] for key in TRIPLE_METADATA_KEYS})
    with atomic_path(out_path) as tmp:
        write_safetensors({k: np.ascontiguousarray(data[k]) for k in keys}, tmp, metadata)
    return Path(out_path)


def split_by_class(x, y, test_fraction):
    """{x_train, y_train, x_test, y_test}: the last `test_fraction` of each class's rows (rounded) is test. A split
    by position, never by RNG, so it depends on no seed."""
    train_idx, test_idx = [], []
    for label in np.unique(y):
        rows = np.flatnonzero(y == label)
        n_test = round(test_fraction * len(rows))
        train_idx.append(rows[: len(rows) - n_test])
        test_idx.append(rows[len(rows) - n_test:])
    train_idx, test_idx = np.concatenate(train_idx), np.concatenate(test_idx)
    return {"x_train": x[train_idx], "y_train": y[train_idx], "x_test": x[test_idx], "y_test": y[test_idx]}


def prepare_digits(out_path, test_fraction):
    """scikit-learn's bundled 8x8 digits (1,797 images, 16 grey levels; no download) as float32 in [0, 1], split by
    position within each class (split_by_class), written through write_safetensors. Returns the arrays."""
    from sklearn.datasets import load_digits  # scikit-learn comes with mlxtend; only this dataset needs it
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    arrays = split_by_class(x, digits.target.astype(np.int64), test_fraction)
    meta = {"dataset": "digits", "source": "sklearn.datasets.load_digits", "test_fraction": str(test_fraction)}
    with atomic_path(out_path) as tmp:
        write_safetensors({k: np.ascontiguousarray(v) for k, v in arrays.items()}, tmp, meta)
    return arrays


def content_sha256(arrays, metadata):
    """sha256 of the metadata (but this digest) and of every array's name, dtype, shape and bytes, in key order."""
    digest = hashlib.sha256(json.dumps({k: v for k, v in metadata.items() if k != DIGEST_KEY}, sort_keys=True).encode())
    for key in sorted(arrays):
        array = np.ascontiguousarray(arrays[key])
        digest.update(json.dumps([key, array.dtype.str, array.shape]).encode())  # fixes the length of the bytes
        digest.update(array.reshape(-1).view(np.uint8))
    return digest.hexdigest()


def write_safetensors(arrays, path, metadata):
    """safetensors keeps metadata in a hash map whose order changes from run to run; the header is
    re-emitted with sorted keys so the same data always gives the same bytes. The metadata gains the
    content digest that read_prepared checks."""
    from safetensors.numpy import save
    metadata = {**metadata, DIGEST_KEY: content_sha256(arrays, metadata)}
    blob = memoryview(save(arrays, metadata=metadata))
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.dumps(json.loads(bytes(blob[8:8 + n])), sort_keys=True, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)  # the format allows trailing spaces; they keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.write(blob[8 + n:])


def read_prepared(path, dataset=None, keys=()):
    """Return (arrays, metadata) from a `prepare`d file (or one written by write_safetensors); metadata values are
    strings as stored, the content digest left out.

    The file must be what the caller asked for: `dataset` (by default, for data/prepared/<name>.safetensors, that
    name) is the one it records, and it holds every array of `keys`. A file that is not, that is unreadable or
    truncated, that does not match its digest, or whose sources are not the registry's pins, is deleted (the next
    run writes it again) and refused with DataCorrupted, one message naming the file, what it holds and what was
    expected."""
    from safetensors import SafetensorError, safe_open
    from safetensors.numpy import load_file
    path = Path(path)
    if dataset is None and path.parent.name == "prepared":
        dataset = path.stem
    try:
        with safe_open(str(path), framework="np") as f:
            metadata = dict(f.metadata() or {})
        arrays = load_file(str(path))
    except (SafetensorError, OSError) as error:  # truncated, not safetensors at all, or unreadable
        if not path.exists():
            raise DataCorrupted(f"{path}: no such file (expected the prepared dataset {dataset or 'file'}); "
                                f"run the pipeline, which writes it") from None
        _refuse(path, f"it is not a readable safetensors file ({error})", dataset)
    recorded = metadata.pop(DIGEST_KEY, None)
    if recorded is None:
        # Files of other writers may carry no digest; one from `prepare` (it records sources) must.
        if "sources" in metadata:
            _refuse(path, "it records no content digest (written before digests were, or stripped of it)", dataset)
    elif content_sha256(arrays, metadata) != recorded:
        _refuse(path, "its arrays or metadata do not match the content digest recorded when it was written", dataset)
    holds = f"dataset {metadata.get('dataset', metadata.get('name'))!r} with arrays {sorted(arrays)}"
    if dataset is not None and metadata.get("dataset", metadata.get("name")) != dataset:
        _refuse(path, f"it holds {holds}, not the dataset {dataset!r} that was asked for")
    missing = [key for key in keys if key not in arrays]
    if missing:
        _refuse(path, f"it holds {holds}, without the arrays {missing} that were asked for")
    if "sources" in metadata:
        _check_sources(path, metadata)
    return arrays, metadata


def _check_sources(path, metadata):
    """The recorded source hashes must be the registry's current pins: a file prepared from other bytes (an old
    pin, a hand-edited header) is not the dataset the registry names."""
    dataset = REGISTRY.get(metadata.get("dataset"))
    if dataset is None:
        _refuse(path, f"it names dataset {metadata.get('dataset')!r}, which is not in the registry")
    sources = json.loads(metadata["sources"])
    if sorted(sources) != sorted(dataset.files):
        _refuse(path, f"its sources {sorted(sources)} are not the files of '{dataset.name}' {sorted(dataset.files)}")
    for role, remote in dataset.files.items():
        pinned = sources[role].get("sha256") == remote.sha256 or (
            remote.raw_sha256 is not None and sources[role].get("raw_sha256") == remote.raw_sha256)
        if not pinned:
            _refuse(path, f"its {role} source has sha256 {sources[role].get('sha256')}, not the pinned {remote.sha256}")


def _refuse(path, reason, expected=None):
    """Delete the file (a rerun then writes it again) and raise DataCorrupted saying why."""
    Path(path).unlink(missing_ok=True)
    wanted = f" (expected: {expected})" if expected else ""
    raise DataCorrupted(f"{path}: {reason}{wanted}. It cannot be trusted and was deleted: rerun (Snakemake, or "
                        f"`python -m shared.data prepare`, writes it again from verified sources).")


