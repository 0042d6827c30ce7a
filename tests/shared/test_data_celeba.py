"""celeba_64 end to end against a real HTTP server on 127.0.0.1: a tiny zip of real JPEGs in the layout of
img_align_celeba.zip, and a list_eval_partition.txt, both pinned by sha256 like the real files."""
import dataclasses
import hashlib
import io
import os
import zipfile

import numpy as np
import pytest
from PIL import Image

from shared import data
from shared.data import DatasetUnavailable, RemoteFile

# Official ids: 0 train, 1 valid (our test split), 2 test (dropped). Mostly CelebA's 178x218 (w x h); one
# landscape image and one whose short side is already 64 cover the other branches of the resize.
SIZES = {"000001.jpg": (178, 218), "000002.jpg": (178, 218), "000003.jpg": (218, 178), "000004.jpg": (64, 100),
         "000005.jpg": (178, 218), "000006.jpg": (178, 218), "000007.jpg": (178, 218)}
PARTITION = {"000001.jpg": 0, "000002.jpg": 0, "000003.jpg": 0, "000004.jpg": 0,
             "000005.jpg": 1, "000006.jpg": 1, "000007.jpg": 2}


def sha256(raw):
    return hashlib.sha256(raw).hexdigest()


def cached_names(folder):
    return sorted(os.listdir(folder)) if folder.exists() else []



def ramp_jpeg(w, h):
    """Red = row index, green = column index, blue = 128: after a linear resize each output pixel still
    reads off where in the source it came from, so the crop can be checked without re-implementing it."""
    pixels = np.empty((h, w, 3), dtype=np.uint8)
    pixels[..., 0], pixels[..., 1], pixels[..., 2] = np.arange(h)[:, None], np.arange(w)[None, :], 128
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "JPEG", quality=95, subsampling=0)
    return out.getvalue()


def source_coordinates(length, new_length, offset, size=64):
    """Source pixel coordinate sampled by each of `size` output pixels after resizing to `new_length` and cropping
    from `offset`: pixel centres map linearly, and the bilinear filter keeps a linear ramp linear."""
    return (np.arange(size) + offset + 0.5) * length / new_length - 0.5


def expected_ramp(w, h, size=64):
    """(red, green) planes for torchvision's rules: shorter side to 64, longer int(64 * long / short), central crop."""
    new_w, new_h = (size, int(size * h / w)) if w <= h else (int(size * w / h), size)
    rows = source_coordinates(h, new_h, round((new_h - size) / 2))
    cols = source_coordinates(w, new_w, round((new_w - size) / 2))
    return np.broadcast_to(rows[:, None], (size, size)), np.broadcast_to(cols[None, :], (size, size))


def assert_close(actual, expected, name):
    """JPEG costs up to a grey level or two, under one on average; a crop one resized pixel off is ~2.8 levels
    out everywhere, a wrong one (top-left, or squashed to 64 x 64) up to ~20."""
    error = np.abs(actual.astype(float) - expected)
    assert error.max() <= 2.5 and error.mean() < 1, f"{name}: max {error.max():.2f}, mean {error.mean():.2f}"


@pytest.fixture
def celeba(server, tmp_path, monkeypatch):
    """Serves the fake archive and partition file; registers celeba_64 with pins and URLs pointing at them."""
    www, base_url, _ = server
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("img_align_celeba/", b"")  # the real zip has its folder entry too
        for name, (w, h) in SIZES.items():
            zf.writestr(f"img_align_celeba/{name}", ramp_jpeg(w, h))
    payloads = {"img_align_celeba.zip": archive.getvalue(),
                "list_eval_partition.txt": "".join(f"{n} {p}\r\n" for n, p in PARTITION.items()).encode()}

    def register(overrides=None):
        """Publish the files (overrides maps filename -> bytes) and point celeba_64 at them."""
        for name, blob in {**payloads, **(overrides or {})}.items():
            (www / name).write_bytes(blob)
        real = data.REGISTRY["celeba_64"]
        files = {role: RemoteFile(r.filename, sha256(payloads[r.filename]), (f"{base_url}/{r.filename}",))
                 for role, r in real.files.items()}
        monkeypatch.setitem(data.REGISTRY, "celeba_64", dataclasses.replace(real, files=files))

    register.payloads, register.cache = payloads, tmp_path / "cache"
    return register


def test_prepare_writes_official_train_and_valid_partitions_center_cropped(celeba, tmp_path):
    celeba()
    out = tmp_path / "celeba_64.safetensors"
    data.prepare("celeba_64", out, celeba.cache)
    arrays, metadata = data.read_prepared(out)
    assert sorted(arrays) == sorted(data.ARRAY_KEYS) and metadata["dataset"] == "celeba_64"
    assert arrays["x_train"].shape == (4, 64, 64, 3) and arrays["x_test"].shape == (2, 64, 64, 3)
    assert arrays["x_train"].dtype == np.uint8 and arrays["x_test"].dtype == np.uint8
    for key, n in (("y_train", 4), ("y_test", 2)):  # no classes: zeros of the right length
        assert arrays[key].dtype == np.int64 and arrays[key].tolist() == [0] * n
    # Partition-file order, and the 'test' partition (000007) is left out.
    names = [n for n, p in PARTITION.items() if p == 0] + [n for n, p in PARTITION.items() if p == 1]
    images = np.concatenate([arrays["x_train"], arrays["x_test"]])
    for name, image in zip(names, images):
        rows, cols = expected_ramp(*SIZES[name])
        assert_close(image[..., 0], rows, f"{name} red (rows)")
        assert_close(image[..., 1], cols, f"{name} green (columns)")
        assert_close(image[..., 2], 128, f"{name} blue")


@pytest.mark.parametrize("name", ["img_align_celeba.zip", "list_eval_partition.txt"])
def test_corrupt_download_fails_its_sha256_and_is_removed(celeba, name):
    blob = celeba.payloads[name]
    i = len(blob) // 2
    celeba({name: blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1:]})
    with pytest.raises(DatasetUnavailable, match="checksum mismatch") as error:
        data.load("celeba_64", celeba.cache)
    assert name in str(error.value) and sha256(blob) in str(error.value)
    # The good file verified and stays; the corrupt one and every temp file are gone.
    assert cached_names(celeba.cache / "celeba_64") == sorted(set(celeba.payloads) - {name})


def test_check_images_keeps_greyscale_rule_for_mnist_and_rgb_rule_for_celeba():
    grey, rgb = np.zeros((2, 28, 28), np.uint8), np.zeros((2, 64, 64, 3), np.uint8)
    labels = np.zeros(2, np.int64)
    data._check_images("mnist", {"x_train": grey, "y_train": labels, "x_test": grey, "y_test": labels})
    data._check_images("celeba_64", {"x_train": rgb, "y_train": labels, "x_test": rgb, "y_test": labels})
    with pytest.raises(ValueError, match=r"\(N, 28, 28\) uint8"):
        data._check_images("mnist", {"x_train": rgb, "y_train": labels, "x_test": rgb, "y_test": labels})
    with pytest.raises(ValueError, match=r"\(N, 64, 64, 3\) uint8"):
        data._check_images("celeba_64", {"x_train": grey, "y_train": labels, "x_test": grey, "y_test": labels})
