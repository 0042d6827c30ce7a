"""Datasets: the registry (registry.py), file readers (formats.py), verified fetching (fetch.py), the prepared
safetensors file every pipeline reads (prepare.py), generated data (stories.py, sequence_tasks.py).

`python -m shared.data info` lists every dataset, licence, URL and checksum.
"""
from shared.data.fetch import DataCorrupted, DataRefused, DatasetUnavailable, fetch
from shared.data.formats import IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC, load_idx_splits, load_tinystories, read_idx
from shared.data.prepare import (
           ARRAY_KEYS,
           TEXT_ARRAY_KEYS,
           _check_images,
           content_sha256,
           load,
           prepare,
           prepare_digits,
           read_prepared,
           split_by_class,
           write_safetensors,
)
from shared.data.registry import IDX_FILENAMES, IDX_ROLES, REGISTRY, Dataset, RemoteFile

__all__ = ["ARRAY_KEYS", "_check_images", "IDX_FILENAMES", "IDX_IMAGES_MAGIC", "IDX_LABELS_MAGIC", "IDX_ROLES", "REGISTRY",
           "TEXT_ARRAY_KEYS", "DataCorrupted", "DataRefused", "Dataset", "DatasetUnavailable", "RemoteFile", "content_sha256",
           "fetch", "load", "load_idx_splits", "load_tinystories", "prepare", "prepare_digits", "read_idx",
           "read_prepared", "split_by_class", "write_safetensors"]
