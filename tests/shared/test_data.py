"""shared.data against a real HTTP server on 127.0.0.1 and real synthetic IDX files (no mocks)."""
import functools
import gzip
import hashlib
import http.server
import importlib
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from shared import data
from shared.data import Dataset, DatasetUnavailable, RemoteFile

fetch_module = importlib.import_module("shared.data.fetch")  # `shared.data.fetch` is also the function

N_IMAGES = 20
FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")


# ---------------------------------------------------------------- fixtures
def idx_gz(array, mtime=0, level=9):
    magic = data.IDX_IMAGES_MAGIC if array.ndim == 3 else data.IDX_LABELS_MAGIC
    header = struct.pack(f">I{array.ndim}I", magic, *array.shape)
    return gzip.compress(header + array.astype(np.uint8).tobytes(), compresslevel=level, mtime=mtime)


def sha256(raw):
    return hashlib.sha256(raw).hexdigest()


@pytest.fixture
def tiny(server, tmp_path, monkeypatch):
    """Synthetic 4-file IDX dataset; `register(bases)` puts it in REGISTRY with URLs under those bases."""
    www, base_url, requests = server
    rng = np.random.default_rng(0)
    arrays = {"x_train": rng.integers(0, 256, (N_IMAGES, 28, 28)), "y_train": rng.integers(0, 10, N_IMAGES),
              "x_test": rng.integers(0, 256, (N_IMAGES // 2, 28, 28)), "y_test": rng.integers(0, 10, N_IMAGES // 2)}
    keys = dict(zip(data.IDX_ROLES, ("x_train", "y_train", "x_test", "y_test")))
    payloads = {name: idx_gz(arrays[keys[role]]) for role, name in zip(data.IDX_ROLES, data.IDX_FILENAMES)}
    raws = {name: gzip.decompress(blob) for name, blob in payloads.items()}

    def serve(folder, overrides=None):
        """Publish every file under www/folder; overrides maps filename -> bytes (or None to omit)."""
        (www / folder).mkdir(parents=True, exist_ok=True)
        for name, blob in {**payloads, **(overrides or {})}.items():
            if blob is not None:
                (www / folder / name).write_bytes(blob)
        return f"{base_url}/{folder}/"

    def register(bases, local_dirs=()):
        files = {role: RemoteFile(name, sha256(payloads[name]), tuple(b + name for b in bases), sha256(raws[name]))
                 for role, name in zip(data.IDX_ROLES, data.IDX_FILENAMES)}
        dataset = Dataset("tiny", "synthetic test set", "CC0", "none", files, tuple(map(str, local_dirs)),
                          data.load_idx_splits)
        monkeypatch.setitem(data.REGISTRY, "tiny", dataset)
        return dataset

    class Tiny:
        pass
    t = Tiny()
    t.arrays, t.payloads, t.raws, t.serve, t.register = arrays, payloads, raws, serve, register
    t.base_url, t.requests, t.cache, t.www = base_url, requests, tmp_path / "cache", www
    t.folder = t.cache / "tiny"
    return t


def cached_names(folder):
    return sorted(os.listdir(folder)) if folder.exists() else []


# ---------------------------------------------------------------- downloads
def test_good_files_download_verify_and_load(tiny):
    tiny.register([tiny.serve("good")])
    loaded = data.load("tiny", tiny.cache)
    for key, expected in tiny.arrays.items():
        assert loaded[key].dtype == (np.uint8 if key.startswith("x") else np.int64)
        assert loaded[key].shape == expected.shape
        np.testing.assert_array_equal(loaded[key], expected)
    assert cached_names(tiny.folder) == sorted(data.IDX_FILENAMES)  # and no temp files
    src = loaded["sources"]["train_images"]
    assert Path(src["path"]) == tiny.folder / "train-images-idx3-ubyte.gz"
    assert src["sha256"] == sha256(tiny.payloads["train-images-idx3-ubyte.gz"])
    n_requests = len(tiny.requests)
    data.load("tiny", tiny.cache)  # second load is served from the verified cache
    assert len(tiny.requests) == n_requests


@pytest.mark.parametrize("damage", [lambda b: b[:10] + bytes([b[10] ^ 0xFF]) + b[11:], lambda b: b[: len(b) // 2]],
                         ids=["corrupt", "truncated"])
def test_bad_download_raises_and_leaves_nothing(tiny, damage):
    name = "train-images-idx3-ubyte.gz"
    tiny.register([tiny.serve("bad", {name: damage(tiny.payloads[name])})])
    with pytest.raises(DatasetUnavailable, match="checksum mismatch") as error:
        data.load("tiny", tiny.cache)
    assert name in str(error.value)
    # The other three files verified and stay; the bad one and every temp file are gone.
    assert cached_names(tiny.folder) == sorted(set(data.IDX_FILENAMES) - {name})


def test_missing_file_message_names_file_url_sha_and_hand_path(tiny):
    name = "t10k-labels-idx1-ubyte.gz"
    dataset = tiny.register([tiny.serve("partial", {name: None})])
    with pytest.raises(DatasetUnavailable) as error:
        data.fetch("tiny", tiny.cache)
    message = str(error.value)
    remote = dataset.files["test_labels"]
    assert remote.urls[0] in message and remote.sha256 in message and "404" in message
    assert str((tiny.folder / name).absolute()) in message
    assert message.count("put it by hand") == 1  # only the missing file is listed
    assert cached_names(tiny.folder) == sorted(set(data.IDX_FILENAMES) - {name})


def test_second_url_tried_after_corrupt_first(tiny):
    name = "train-labels-idx1-ubyte.gz"
    tiny.register([tiny.serve("bad", {name: b"not a gzip file"}), tiny.serve("good")])
    loaded = data.load("tiny", tiny.cache)
    np.testing.assert_array_equal(loaded["y_train"], tiny.arrays["y_train"])
    assert f"/bad/{name}" in tiny.requests and f"/good/{name}" in tiny.requests
    assert cached_names(tiny.folder) == sorted(data.IDX_FILENAMES)


def test_corrupt_cached_file_is_deleted_and_redownloaded(tiny):
    tiny.register([tiny.serve("good")])
    name = "t10k-images-idx3-ubyte.gz"
    tiny.folder.mkdir(parents=True)
    (tiny.folder / name).write_bytes(b"garbage left by an old crash")
    loaded = data.load("tiny", tiny.cache)
    assert (tiny.folder / name).read_bytes() == tiny.payloads[name]
    assert f"/good/{name}" in tiny.requests
    np.testing.assert_array_equal(loaded["x_test"], tiny.arrays["x_test"])


def test_corrupt_cached_file_is_deleted_even_when_no_url_works(tiny):
    tiny.register([f"{tiny.base_url}/nowhere/"])
    name = "t10k-images-idx3-ubyte.gz"
    tiny.folder.mkdir(parents=True)
    (tiny.folder / name).write_bytes(b"garbage left by an old crash")
    with pytest.raises(DatasetUnavailable, match="404"):
        data.fetch("tiny", tiny.cache)
    assert cached_names(tiny.folder) == []


def test_mirror_is_tried_before_registry_urls(tiny, monkeypatch):
    tiny.serve("mirror/tiny")
    tiny.register([tiny.serve("good")])
    monkeypatch.setenv("REPLICATIONS_MIRROR", f"{tiny.base_url}/mirror/")
    data.load("tiny", tiny.cache)
    assert sorted(tiny.requests) == sorted(f"/mirror/tiny/{name}" for name in data.IDX_FILENAMES)


def test_default_cache_dir_comes_from_env(tiny, monkeypatch):
    tiny.register([tiny.serve("good")])
    monkeypatch.setenv("REPLICATIONS_DATA_DIR", str(tiny.cache))
    paths = data.fetch("tiny")
    assert all(path.parent == tiny.folder for path in paths.values())


def test_recompressed_local_copy_is_verified_by_raw_sha256(tiny, tmp_path):
    local = tmp_path / "system"
    local.mkdir()
    for name, raw in tiny.raws.items():  # same payload, different gzip bytes (like Debian's copy)
        recompressed = gzip.compress(raw, compresslevel=1, mtime=12345)
        assert sha256(recompressed) != sha256(tiny.payloads[name])
        (local / name).write_bytes(recompressed)
    tiny.register([f"{tiny.base_url}/nowhere/"], local_dirs=[local])
    loaded = data.load("tiny", tiny.cache)
    np.testing.assert_array_equal(loaded["x_train"], tiny.arrays["x_train"])
    assert tiny.requests == [] and not tiny.folder.exists()
    assert Path(loaded["sources"]["train_images"]["path"]).parent == local


def test_local_copy_with_wrong_payload_is_skipped_not_deleted(tiny, tmp_path):
    local = tmp_path / "system"
    local.mkdir()
    name = "train-labels-idx1-ubyte.gz"
    (local / name).write_bytes(gzip.compress(b"different payload"))
    tiny.register([tiny.serve("good")], local_dirs=[local])
    paths = data.fetch("tiny", tiny.cache)
    assert paths["train_labels"] == tiny.folder / name and (local / name).exists()


@pytest.fixture
def flaky_server(tiny):
    """A second real server over the same folder that answers `status` to the first `failures` requests of each
    path; yields (base URL, {path: requests seen}, settings)."""
    seen, settings = {}, {"status": 503, "failures": 1}

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            seen[self.path] = seen.get(self.path, 0) + 1
            if seen[self.path] <= settings["failures"]:
                self.send_error(settings["status"])
            else:
                super().do_GET()

        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(tiny.www)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen, settings
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def test_transient_server_error_is_retried(tiny, flaky_server, monkeypatch):
    monkeypatch.setattr(fetch_module, "RETRY_WAIT_S", 0)
    base, seen, _ = flaky_server
    tiny.serve("good")
    tiny.register([f"{base}/good/"])
    loaded = data.load("tiny", tiny.cache)
    np.testing.assert_array_equal(loaded["y_train"], tiny.arrays["y_train"])
    assert sorted(seen.values()) == [2] * 4  # one 503, then the file
    assert cached_names(tiny.folder) == sorted(data.IDX_FILENAMES)


def test_a_server_that_stays_down_fails_after_the_retries(tiny, flaky_server, monkeypatch):
    monkeypatch.setattr(fetch_module, "RETRY_WAIT_S", 0)
    base, seen, settings = flaky_server
    settings["failures"] = 99
    tiny.serve("good")
    tiny.register([f"{base}/good/"])
    with pytest.raises(DatasetUnavailable, match="503") as error:
        data.fetch("tiny", tiny.cache)
    assert str(error.value).count("503") == 4
    assert sorted(seen.values()) == [1 + fetch_module.RETRIES] * 4
    assert cached_names(tiny.folder) == []


def test_a_404_is_not_retried(tiny, flaky_server, monkeypatch):
    monkeypatch.setattr(fetch_module, "RETRY_WAIT_S", 0)
    base, seen, settings = flaky_server
    settings["status"], settings["failures"] = 404, 99
    tiny.register([f"{base}/good/", tiny.serve("good")])  # the second URL serves the files
    data.fetch("tiny", tiny.cache)
    assert sorted(seen.values()) == [1] * 4


def test_a_download_is_as_readable_as_any_new_file_and_leaves_no_temp_file(tiny):
    tiny.register([tiny.serve("good")])
    paths = data.fetch("tiny", tiny.cache)
    umask = os.umask(0)
    os.umask(umask)
    for path in paths.values():
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    assert cached_names(tiny.folder) == sorted(data.IDX_FILENAMES)


def test_download_writes_no_progress_bar_into_a_log(tiny, capfd):
    """stderr is not a terminal here (a log file, in a pipeline): no tqdm carriage returns in it."""
    tiny.register([tiny.serve("good")])
    data.fetch("tiny", tiny.cache)
    err = capfd.readouterr().err
    assert "\r" not in err


# ---------------------------------------------------------------- IDX parsing
@pytest.mark.parametrize("raw, problem", [
    (struct.pack(">II", 1234, 3) + b"abc", "magic"),
    (struct.pack(">II", 2049, 5) + b"abc", "need 5 bytes"),
    (struct.pack(">IIII", 2051, 2, 28, 28) + bytes(28 * 28), "need 1568 bytes"),
    (b"\x00\x00", "too short"),
])
def test_malformed_idx_raises_clear_error(tmp_path, raw, problem):
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(raw))
    with pytest.raises(ValueError, match=problem):
        data.read_idx(path)


def test_labels_file_in_images_role_is_rejected(tmp_path):
    path = tmp_path / "labels.gz"
    path.write_bytes(idx_gz(np.zeros(4)))
    with pytest.raises(ValueError, match="magic"):
        data.read_idx(path, expected_magic=data.IDX_IMAGES_MAGIC)


# ---------------------------------------------------------------- real registry entries
def test_mnist_5k_split_is_400_100_per_class():
    loaded = data.load("mnist_5k")
    assert loaded["x_train"].shape == (4000, 28, 28) and loaded["x_test"].shape == (1000, 28, 28)
    assert np.bincount(loaded["y_train"]).tolist() == [400] * 10
    assert np.bincount(loaded["y_test"]).tolist() == [100] * 10
    assert loaded["x_train"].max() == 255 and loaded["x_train"].dtype == np.uint8
    assert loaded["sources"]["all"]["sha256"] == data.REGISTRY["mnist_5k"].files["all"].sha256


@pytest.mark.skipif(not FASHION_DIR.is_dir(), reason=f"{FASHION_DIR} absent (Debian package dataset-fashion-mnist)")
def test_fashion_mnist_loads_from_debian_copy(tmp_path):
    loaded = data.load("fashion_mnist", tmp_path)
    assert loaded["x_train"].shape == (60000, 28, 28) and loaded["x_test"].shape == (10000, 28, 28)
    assert np.bincount(loaded["y_train"]).tolist() == [6000] * 10
    assert all(Path(s["path"]).parent == FASHION_DIR for s in loaded["sources"].values())
    assert not (tmp_path / "fashion_mnist").exists()  # nothing downloaded or copied


# ---------------------------------------------------------------- prepare / CLI
def test_prepare_read_prepared_round_trip(tiny, tmp_path):
    tiny.register([tiny.serve("good")])
    out = tmp_path / "prepared" / "tiny.safetensors"
    data.prepare("tiny", out, tiny.cache)
    arrays, metadata = data.read_prepared(out)
    assert sorted(arrays) == sorted(data.ARRAY_KEYS)
    for key, expected in tiny.arrays.items():
        np.testing.assert_array_equal(arrays[key], expected)
    assert arrays["y_train"].dtype == np.int64 and arrays["x_train"].dtype == np.uint8
    assert metadata["dataset"] == "tiny" and metadata["licence"] == "CC0"
    assert json.loads(metadata["sources"])["test_labels"]["sha256"] == data.REGISTRY["tiny"].files["test_labels"].sha256
    assert os.listdir(out.parent) == ["tiny.safetensors"]  # atomic write left no temp file


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_cli_exits_2_with_message_when_unavailable(server, tmp_path):
    _, base_url, _ = server  # serves an empty folder: every mirror request is a 404
    empty_cache, out = tmp_path / "empty", tmp_path / "mnist.safetensors"
    empty_cache.mkdir()
    dead_proxy = f"http://127.0.0.1:{_closed_port()}"  # registry URLs fail fast, online or not
    env = {**os.environ, "REPLICATIONS_DATA_DIR": str(empty_cache), "REPLICATIONS_MIRROR": base_url,
           "http_proxy": dead_proxy, "https_proxy": dead_proxy, "no_proxy": "127.0.0.1"}
    result = subprocess.run([sys.executable, "-m", "shared.data", "prepare", "mnist", str(out)],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"{base_url}/mnist/train-images-idx3-ubyte.gz" in result.stderr
    assert data.REGISTRY["mnist"].files["train_images"].sha256 in result.stderr
    assert str(empty_cache / "mnist" / "train-images-idx3-ubyte.gz") in result.stderr
    assert not out.exists() and os.listdir(empty_cache / "mnist") == []


def test_cli_info_lists_every_dataset():
    result = subprocess.run([sys.executable, "-m", "shared.data", "info"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for dataset in data.REGISTRY.values():
        assert dataset.name in result.stdout and dataset.licence in result.stdout
        for remote in dataset.files.values():
            assert remote.sha256 in result.stdout and all(url in result.stdout for url in remote.urls)
