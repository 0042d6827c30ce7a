"""cifar10 end to end against a real HTTP server on 127.0.0.1: a tiny tarball in the layout of the binary archive
(cifar-10-batches-bin/*.bin, records of a label byte and three 32x32 planes), pinned by sha256 like the real one."""
import dataclasses
import hashlib
import io
import tarfile

import numpy as np
import pytest

from shared import data
from shared.data import DatasetUnavailable, RemoteFile
from shared.data.formats import CIFAR10_MEMBERS


def records(labels, seed):
    """Records whose pixels read off their plane: red = 10 + label, green = row, blue = column (+ noise-free)."""
    out = []
    for label in labels:
        planes = np.empty((3, 32, 32), dtype=np.uint8)
        planes[0], planes[1], planes[2] = 10 + label + seed, np.arange(32)[:, None], np.arange(32)[None, :]
        out.append(bytes([label]) + planes.tobytes())
    return b"".join(out)


def archive_bytes(counts=(2, 1, 1, 1, 3, 2), corrupt_member=None):
    blob = io.BytesIO()
    with tarfile.open(fileobj=blob, mode="w:gz") as tar:
        members = CIFAR10_MEMBERS["train"] + CIFAR10_MEMBERS["test"]
        for i, (member, n) in enumerate(zip(members, counts)):
            payload = records([(i + j) % 10 for j in range(n)], seed=i)
            if member == corrupt_member:
                payload = payload[:-5]
            info = tarfile.TarInfo(member)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    return blob.getvalue()


@pytest.fixture
def cifar(server, tmp_path, monkeypatch):
    www, base_url, _ = server

    def register(blob, pin=None):
        (www / "cifar-10-binary.tar.gz").write_bytes(blob)
        real = data.REGISTRY["cifar10"]
        remote = RemoteFile("cifar-10-binary.tar.gz", pin or hashlib.sha256(blob).hexdigest(),
                            (f"{base_url}/cifar-10-binary.tar.gz",))
        monkeypatch.setitem(data.REGISTRY, "cifar10", dataclasses.replace(real, files={"archive": remote}))
        return tmp_path / "cache"
    return register


def test_prepare_reads_records_into_hwc_images(cifar, tmp_path):
    cache = cifar(archive_bytes())
    out = tmp_path / "cifar10.safetensors"
    data.prepare("cifar10", out, cache)
    arrays, metadata = data.read_prepared(out)
    assert metadata["dataset"] == "cifar10"
    assert arrays["x_train"].shape == (8, 32, 32, 3) and arrays["x_test"].shape == (2, 32, 32, 3)
    assert arrays["y_train"].tolist() == [0, 1, 1, 2, 3, 4, 5, 6] and arrays["y_test"].tolist() == [5, 6]
    first = arrays["x_train"][0]
    assert (first[..., 0] == 10).all()  # red plane: 10 + label + batch index
    assert (first[..., 1] == np.arange(32)[:, None]).all() and (first[..., 2] == np.arange(32)[None, :]).all()


def test_corrupt_download_fails_its_sha256_and_is_removed(cifar):
    good = archive_bytes()
    cache = cifar(good[:-7] + b"garbage", pin=hashlib.sha256(good).hexdigest())
    with pytest.raises(DatasetUnavailable, match="checksum mismatch"):
        data.load("cifar10", cache)
    folder = cache / "cifar10"
    assert not folder.exists() or not any(folder.iterdir())  # neither the bad file nor a temp file is left


def test_truncated_member_is_rejected_by_name(cifar):
    cache = cifar(archive_bytes(corrupt_member=CIFAR10_MEMBERS["train"][2]))
    with pytest.raises(ValueError, match="data_batch_3.bin"):
        data.load("cifar10", cache)
