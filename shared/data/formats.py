"""Readers of dataset file formats: IDX (MNIST), the CIFAR-10 binary archive, the CelebA zip, story text."""
import gzip
import hashlib
import io
import struct
import tarfile
import zipfile
from pathlib import Path

import numpy as np

from shared.data.stories import UNK, WordTokenizer, encode_stories, generate_stories

IDX_LABELS_MAGIC, IDX_IMAGES_MAGIC = 2049, 2051

def read_idx(path, expected_magic=None):
    """Parse a gzipped IDX file of unsigned bytes (labels: 1 dim, images: 3 dims)."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for an IDX header ({len(data)} bytes)")
    (magic,) = struct.unpack(">I", data[:4])
    ndim = {IDX_LABELS_MAGIC: 1, IDX_IMAGES_MAGIC: 3}.get(magic)
    if ndim is None or (expected_magic is not None and magic != expected_magic):
        raise ValueError(f"{path}: bad IDX magic number {magic} (expected {expected_magic or '2049/2051'})")
    header_len = 4 + 4 * ndim
    if len(data) < header_len:
        raise ValueError(f"{path}: IDX header truncated")
    dims = struct.unpack(f">{ndim}I", data[4:header_len])
    if len(data) - header_len != int(np.prod(dims)):
        raise ValueError(f"{path}: IDX dims {dims} need {int(np.prod(dims))} bytes, "
                         f"found {len(data) - header_len}")
    return np.frombuffer(data, dtype=np.uint8, offset=header_len).reshape(dims)


def load_idx_splits(paths):
    return {
        "x_train": read_idx(paths["train_images"], IDX_IMAGES_MAGIC),
        "y_train": read_idx(paths["train_labels"], IDX_LABELS_MAGIC).astype(np.int64),
        "x_test": read_idx(paths["test_images"], IDX_IMAGES_MAGIC),
        "y_test": read_idx(paths["test_labels"], IDX_LABELS_MAGIC).astype(np.int64),
    }


MNIST_5K_TRAIN_PER_CLASS = 400


def load_mnist_5k(paths):
    """CSV rows of 784 pixels + label, sorted by class; first 400 of each class train, rest test."""
    rows = np.loadtxt(paths["all"], delimiter=",", dtype=np.int64)
    if rows.ndim != 2 or rows.shape[1] != 785 or rows[:, :784].min() < 0 or rows[:, :784].max() > 255:
        raise ValueError(f"{paths['all']}: expected rows of 784 pixels in 0..255 plus a label, got {rows.shape}")
    images, labels = rows[:, :784].astype(np.uint8).reshape(-1, 28, 28), rows[:, 784]
    # Split by position within each class, not by RNG, so the split never depends on a seed.
    train_idx, test_idx = [], []
    for digit in np.unique(labels):
        rows_of_digit = np.flatnonzero(labels == digit)
        train_idx.append(rows_of_digit[:MNIST_5K_TRAIN_PER_CLASS])
        test_idx.append(rows_of_digit[MNIST_5K_TRAIN_PER_CLASS:])
    train_idx, test_idx = np.concatenate(train_idx), np.concatenate(test_idx)
    return {"x_train": images[train_idx], "y_train": labels[train_idx],
            "x_test": images[test_idx], "y_test": labels[test_idx]}


CIFAR10_RECORD = 1 + 32 * 32 * 3  # a label byte, then the red, green and blue 32x32 planes
CIFAR10_MEMBERS = {"train": [f"cifar-10-batches-bin/data_batch_{i}.bin" for i in range(1, 6)],
                   "test": ["cifar-10-batches-bin/test_batch.bin"]}


def load_cifar10_binary(paths):
    """The 'binary version' tarball (no pickles): records of 3073 bytes, read straight from the archive into
    (N, 32, 32, 3) uint8 images (HWC, as the registry stores colour) and int64 labels."""
    arrays = {}
    with tarfile.open(paths["archive"], "r:gz") as archive:
        for split, members in CIFAR10_MEMBERS.items():
            chunks = []
            for member in members:
                handle = archive.extractfile(member)
                if handle is None:
                    raise ValueError(f"{paths['archive']}: {member} is not a regular file")
                data = np.frombuffer(handle.read(), dtype=np.uint8)
                if len(data) % CIFAR10_RECORD:
                    raise ValueError(f"{paths['archive']}: {member} holds {len(data)} bytes, not whole records")
                chunks.append(data.reshape(-1, CIFAR10_RECORD))
            records = np.concatenate(chunks)
            if records[:, 0].max() > 9:
                raise ValueError(f"{paths['archive']}: labels above 9 in {split}")
            arrays[f"x_{split}"] = np.ascontiguousarray(records[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
            arrays[f"y_{split}"] = records[:, 0].astype(np.int64)
    return arrays


CELEBA_SIZE = 64
CELEBA_PARTITIONS = {"train": 0, "test": 1}  # list_eval_partition ids: 0 train, 1 valid, 2 test


def resize_center_crop(image, size):
    """torchvision's Resize(size) then CenterCrop(size) on a PIL image, as the Linearizer code does: the
    shorter side becomes `size` (bilinear, the longer side truncated to an int), then the central square."""
    from PIL import Image  # pillow comes with matplotlib; only image decoding needs it
    w, h = image.size
    new_w, new_h = (size, int(size * h / w)) if w <= h else (int(size * w / h), size)
    image = image.resize((new_w, new_h), Image.BILINEAR)
    left, top = int(round((new_w - size) / 2)), int(round((new_h - size) / 2))
    return image.crop((left, top, left + size, top + size))


def load_celeba(paths):
    """Each JPEG is decoded, resized and cropped on its own straight into a preallocated uint8 array,
    so memory stays near the output size (about 2.2 GB for the full train + valid partitions)."""
    from PIL import Image
    with open(paths["partition"]) as f:  # '000001.jpg 0' per line
        partition = dict((name, int(part)) for name, part in (line.split() for line in f if line.strip()))
    arrays = {}
    with zipfile.ZipFile(paths["images"]) as archive:
        members = {Path(info.filename).name: info for info in archive.infolist() if not info.is_dir()}
        for split, part in CELEBA_PARTITIONS.items():
            names = [name for name, p in partition.items() if p == part]  # partition-file order, as torchvision
            missing = [name for name in names if name not in members]
            if missing:
                raise ValueError(f"{paths['images']}: {len(missing)} images of the partition file are missing, "
                                 f"e.g. {missing[0]}")
            x = np.empty((len(names), CELEBA_SIZE, CELEBA_SIZE, 3), dtype=np.uint8)
            for i, name in enumerate(names):
                with Image.open(io.BytesIO(archive.read(members[name]))) as image:
                    x[i] = np.asarray(resize_center_crop(image.convert("RGB"), CELEBA_SIZE))
            arrays[f"x_{split}"], arrays[f"y_{split}"] = x, np.zeros(len(names), dtype=np.int64)
    return arrays


# ---------------------------------------------------------------- text
SYNTHETIC_TRAIN_STORIES, SYNTHETIC_TRAIN_SEED = 40_000, 0
SYNTHETIC_VAL_STORIES, SYNTHETIC_VAL_SEED = 2_000, 1
SYNTHETIC_VOCAB_SIZE = 512  # an upper bound: the lexicon needs far fewer words, and all of them must fit
TINYSTORIES_VOCAB_SIZE = 4096
TINYSTORIES_SEPARATOR = "<|endoftext|>"


def tokenized_splits(train_stories, val_stories, vocab_size):
    """Token streams of both splits, with a word tokenizer fit on the train split only."""
    tokenizer = WordTokenizer.fit(train_stories, vocab_size)
    return {"train_tokens": encode_stories(train_stories, tokenizer),
            "val_tokens": encode_stories(val_stories, tokenizer),
            "vocab": tokenizer.to_json(), "n_train_stories": len(train_stories), "n_val_stories": len(val_stories)}


def load_stories_synthetic(paths):
    """No files: the stories come from shared.data.stories with the seeds above."""
    splits = tokenized_splits(generate_stories(SYNTHETIC_TRAIN_STORIES, SYNTHETIC_TRAIN_SEED),
                              generate_stories(SYNTHETIC_VAL_STORIES, SYNTHETIC_VAL_SEED), SYNTHETIC_VOCAB_SIZE)
    for key in ("train_tokens", "val_tokens"):
        if (splits[key] == UNK).any():
            raise ValueError(f"stories_synthetic: {key} has unknown words; the lexicon outgrew SYNTHETIC_VOCAB_SIZE")
    return splits


def read_stories(path):
    """The stripped texts between separators of a TinyStories file (read line by line: it is 2 GB)."""
    story = []
    # Invalid bytes become U+FFFD, which the tokenizer maps to [UNK], instead of stopping the whole load.
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            *ended, rest = line.split(TINYSTORIES_SEPARATOR)
            for piece in ended:
                yield "".join(story + [piece]).strip()
                story = []
            story.append(rest)
    yield "".join(story).strip()


def unique_stories(stories, seen):
    """The non-empty stories whose digest is not in `seen`, which is updated in place."""
    kept = []
    for story in stories:
        digest = hashlib.blake2b(story.encode(), digest_size=16).digest()  # not the text: 2.7M stories
        if story and digest not in seen:
            seen.add(digest)
            kept.append(story)
    return kept


def load_tinystories(paths):
    """Exact duplicates dropped (the paper used a de-duplicated TinyStories), and validation stories
    that also occur in train, so validation loss never scores memorised text."""
    seen = set()
    train = unique_stories(read_stories(paths["train"]), seen)
    val = unique_stories(read_stories(paths["val"]), seen)
    return tokenized_splits(train, val, TINYSTORIES_VOCAB_SIZE)


