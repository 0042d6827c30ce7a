"""Bad input never passes silently: one probe per way a dataset can go wrong, each against real parts (a real HTTP
server on 127.0.0.1, real files, the real CLI and, for the end-to-end cases, a real Snakemake run in a scratch copy).

Every probe asserts that the input is refused, with a message naming the file or dataset and the reason, that the
user sees no Python traceback, and that nothing unverified is left in the cache."""
import functools
import gzip
import hashlib
import http.server
import json
import os
import struct
import threading
from pathlib import Path

import numpy as np
import pytest

from shared import data
from shared.data import DataCorrupted, Dataset, RemoteFile
from shared.data.__main__ import main
from shared.pipeline.scratch import copy_repo, snakemake

TRACEBACK = "Traceback (most recent call last)"
MNIST = data.REGISTRY["mnist"]


def sha256(raw):
    return hashlib.sha256(raw).hexdigest()


def idx_gz(array):
    magic = data.IDX_IMAGES_MAGIC if array.ndim == 3 else data.IDX_LABELS_MAGIC
    header = struct.pack(f">I{array.ndim}I", magic, *array.shape)
    return gzip.compress(header + array.astype(np.uint8).tobytes(), mtime=0)


def assert_cache_verified(folder, files):
    """Every file left in `folder` is one of `files` (RemoteFiles) with its pinned sha256: no temp, partial or
    corrupt file."""
    pins = {remote.filename: remote.sha256 for remote in files}
    for path in Path(folder).iterdir() if Path(folder).exists() else ():
        assert path.name in pins and sha256(path.read_bytes()) == pins[path.name], f"unverified file left: {path}"


def refused(capsys, *argv):
    """Run the CLI in-process (so that it sees a monkeypatched registry); its stderr, once it has exited 2 without
    a traceback (an exception escaping main() fails the test)."""
    assert main(["prepare", *map(str, argv)]) == 2
    err = capsys.readouterr().err
    assert TRACEBACK not in err
    return err


@pytest.fixture
def tiny(server, tmp_path, monkeypatch):
    """A synthetic 4-file IDX dataset 'tiny' served under www/<folder>/; register() puts it in REGISTRY."""
    www, base_url, _ = server
    rng = np.random.default_rng(0)
    shapes = {"train_images": (8, 28, 28), "train_labels": (8,), "test_images": (4, 28, 28), "test_labels": (4,)}
    payloads = {name: idx_gz(rng.integers(0, 10, shapes[role]))
                for role, name in zip(data.IDX_ROLES, data.IDX_FILENAMES)}

    def serve(folder, overrides=None):
        (www / folder).mkdir(parents=True, exist_ok=True)
        for name, blob in {**payloads, **(overrides or {})}.items():
            if blob is not None:
                (www / folder / name).write_bytes(blob)
        return f"{base_url}/{folder}/"

    def register(bases, max_bytes=None, loader=data.load_idx_splits):
        """bases: URL prefixes, tried in order; max_bytes: {filename: download cap}."""
        files = {role: RemoteFile(name, sha256(payloads[name]), tuple(b + name for b in bases),
                                  max_bytes=(max_bytes or {}).get(name))
                 for role, name in zip(data.IDX_ROLES, data.IDX_FILENAMES)}
        monkeypatch.setitem(data.REGISTRY, "tiny", Dataset("tiny", "synthetic", "CC0", "none", files, (), loader))
        return files

    class Tiny:
        pass
    t = Tiny()
    t.payloads, t.serve, t.register, t.www, t.base_url = payloads, serve, register, www, base_url
    t.cache, t.out = tmp_path / "cache", tmp_path / "prepared" / "tiny.safetensors"
    t.folder = t.cache / "tiny"
    return t


@pytest.fixture
def no_length_server(tiny):
    """A second real server over the same folder that sends no Content-Length (the body ends when it closes)."""
    class Handler(http.server.SimpleHTTPRequestHandler):
        def send_header(self, key, value):
            if key.lower() != "content-length":
                super().send_header(key, value)

        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(tiny.www)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


# ---------------------------------------------------------------- downloads
def flip_one_byte(blob):
    return blob[:10] + bytes([blob[10] ^ 0xFF]) + blob[11:]


@pytest.mark.parametrize("damage", [flip_one_byte, lambda b: b[: len(b) // 2]], ids=["corrupt", "truncated"])
def test_damaged_download_is_refused_and_removed(tiny, capsys, damage):
    name = "train-images-idx3-ubyte.gz"
    files = tiny.register([tiny.serve("bad", {name: damage(tiny.payloads[name])})])
    err = refused(capsys, "tiny", tiny.out, "--cache", tiny.cache)
    assert "Dataset 'tiny'" in err and name in err and "checksum mismatch" in err
    assert_cache_verified(tiny.folder, files.values())
    assert not (tiny.folder / name).exists() and not tiny.out.exists()


def test_missing_file_is_refused_with_404(tiny, capsys):
    name = "t10k-labels-idx1-ubyte.gz"
    files = tiny.register([tiny.serve("partial", {name: None})])
    err = refused(capsys, "tiny", tiny.out, "--cache", tiny.cache)
    assert name in err and "404" in err and "put it by hand" in err
    assert_cache_verified(tiny.folder, files.values())
    assert not tiny.out.exists()


@pytest.mark.parametrize("length_header", [True, False], ids=["content-length", "no-content-length"])
def test_download_over_the_cap_is_stopped_and_removed(tiny, capsys, no_length_server, length_header):
    name = "train-images-idx3-ubyte.gz"
    served = tiny.serve("files")
    base = served if length_header else f"{no_length_server}/files/"
    # The other files are capped at exactly their size: a cap is a bound, not a guess that must be exceeded.
    caps = {n: len(blob) for n, blob in tiny.payloads.items()} | {name: len(tiny.payloads[name]) - 1}
    files = tiny.register([base], max_bytes=caps)
    err = refused(capsys, "tiny", tiny.out, "--cache", tiny.cache)
    assert name in err and "exceeds the download cap" in err and f"{caps[name]} bytes" in err
    assert ("Content-Length" in err) == length_header  # refused up front when the server says the size
    assert_cache_verified(tiny.folder, files.values())
    assert sorted(os.listdir(tiny.folder)) == sorted(set(data.IDX_FILENAMES) - {name})


def test_mirror_mismatch_is_reported_even_when_the_next_url_fails_dns(tiny, capsys, monkeypatch):
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(var, raising=False)
    name = "train-labels-idx1-ubyte.gz"
    tiny.serve("mirror/tiny", {name: flip_one_byte(tiny.payloads[name])})
    files = tiny.register([tiny.serve("good", {name: None}), "http://no-such-host.invalid/"])
    monkeypatch.setenv("REPLICATIONS_MIRROR", f"{tiny.base_url}/mirror")
    err = refused(capsys, "tiny", tiny.out, "--cache", tiny.cache)
    section = err[err.index(name):]
    assert "checksum mismatch" in section and "/mirror/tiny/" + name in section  # which source served what
    assert "404" in section and "no-such-host.invalid" in section  # and every other source, with its error
    assert_cache_verified(tiny.folder, files.values())


# ---------------------------------------------------------------- verify, then load
def swapping_loader(name, how):
    """A loader that swaps `name` after it was verified and before it is read, as another process could: `rename`
    puts other valid IDX data in place, `rewrite` writes it into the same inode (both load without error), `garbage`
    writes bytes the loader fails on (the refusal must still say why)."""
    def load(paths):
        path = next(p for p in paths.values() if p.name == name)
        other = idx_gz(np.full((8,), 3))
        if how == "rename":
            (path.parent / "other").write_bytes(other)
            os.replace(path.parent / "other", path)
        elif how == "rewrite":
            path.write_bytes(other + b"\0")  # a different size too, in case the clock is coarse
        else:
            path.write_bytes(b"not gzip")
        return data.load_idx_splits(paths)
    return load


@pytest.mark.parametrize("how", ["rename", "rewrite", "garbage"])
def test_file_swapped_after_verification_is_refused(tiny, capsys, how):
    name = "train-labels-idx1-ubyte.gz"
    files = tiny.register([tiny.serve("good")], loader=swapping_loader(name, how))
    err = refused(capsys, "tiny", tiny.out, "--cache", tiny.cache)
    assert name in err and "changed after its sha256 was verified" in err
    assert_cache_verified(tiny.folder, files.values())
    assert not tiny.out.exists()
    with pytest.raises(DataCorrupted, match=name):  # the library call refuses too, not only the CLI
        data.load("tiny", tiny.cache)


# ---------------------------------------------------------------- prepared files
@pytest.fixture
def prepared(tiny):
    tiny.register([tiny.serve("good")])
    data.prepare("tiny", tiny.out, tiny.cache)
    return tiny.out


def test_prepared_file_round_trips_reproducibly(prepared, tiny):
    arrays, metadata = data.read_prepared(prepared)
    assert sorted(arrays) == sorted(data.ARRAY_KEYS) and metadata["dataset"] == "tiny"
    assert sorted(metadata) == ["dataset", "licence", "sources"]  # the integrity digest is checked, not returned
    again = tiny.out.with_name("again.safetensors")
    data.prepare("tiny", again, tiny.cache)
    assert again.read_bytes() == prepared.read_bytes()


def test_prepared_file_with_changed_array_bytes_is_refused(prepared):
    blob = bytearray(prepared.read_bytes())
    blob[-1] ^= 0x01  # the last byte of the last array
    prepared.write_bytes(bytes(blob))
    with pytest.raises(DataCorrupted, match="was deleted") as error:
        data.read_prepared(prepared)
    assert str(prepared) in str(error.value) and "do not match" in str(error.value)


def test_prepared_file_with_edited_header_is_refused(prepared):
    """The same header bytes with one recorded source hash replaced: still valid JSON, still loadable."""
    pin = data.REGISTRY["tiny"].files["train_images"].sha256
    prepared.write_bytes(prepared.read_bytes().replace(pin.encode(), b"0" * len(pin)))
    with pytest.raises(DataCorrupted, match="was deleted") as error:
        data.read_prepared(prepared)
    assert str(prepared) in str(error.value)


def test_prepared_file_with_unpinned_sources_is_refused(prepared):
    """Rewritten whole (so its own digest is consistent) but from a source that is not the registry's pin."""
    arrays, metadata = data.read_prepared(prepared)
    sources = json.loads(metadata["sources"])
    sources["train_images"]["sha256"] = "0" * 64
    data.write_safetensors(arrays, prepared, {**metadata, "sources": json.dumps(sources, sort_keys=True)})
    with pytest.raises(DataCorrupted, match="was deleted") as error:
        data.read_prepared(prepared)
    message = str(error.value)
    assert str(prepared) in message and "train_images" in message and "pinned" in message


def test_prepared_file_without_digest_is_refused(prepared):
    """A prepared file from before the digest was recorded (or stripped of it) cannot be checked, so it is refused."""
    from safetensors.numpy import save_file
    arrays, metadata = data.read_prepared(prepared)
    save_file(arrays, str(prepared), metadata=metadata)
    with pytest.raises(DataCorrupted, match="was deleted") as error:
        data.read_prepared(prepared)
    assert str(prepared) in str(error.value)


# ---------------------------------------------------------------- a prepared file is the dataset asked for
def test_prepared_file_of_another_dataset_in_its_place_is_refused_and_deleted(prepared):
    """Another dataset's intact prepared file copied over this one (UMLS over Kinships, say): the digest holds, the
    name does not."""
    swapped = prepared.with_name("kinships.safetensors")
    prepared.rename(swapped)
    with pytest.raises(DataCorrupted) as error:
        data.read_prepared(swapped)
    message = str(error.value)
    assert str(swapped) in message and "holds dataset 'tiny'" in message and "'kinships'" in message
    assert "was deleted" in message and not swapped.exists()


def test_prepared_file_of_another_kind_in_mnists_place_is_refused_not_a_key_error(tmp_path):
    from shared.data.images import load_images

    path = tmp_path / "data" / "prepared" / "mnist.safetensors"
    path.parent.mkdir(parents=True)
    data.write_safetensors({"train_tokens": np.arange(4, dtype=np.int32)}, path, {"dataset": "stories_synthetic"})
    with pytest.raises(DataCorrupted, match="holds dataset 'stories_synthetic' with arrays \\['train_tokens'\\], "
                                            "not the dataset 'mnist'"):
        load_images(path)
    data.write_safetensors({"train_tokens": np.arange(4, dtype=np.int32)}, path, {"dataset": "mnist"})
    with pytest.raises(DataCorrupted, match="without the arrays \\['x_train', 'y_train', 'x_test', 'y_test'\\]"):
        load_images(path)
    assert not path.exists()


def test_truncated_prepared_file_is_refused_in_one_line_deleted_and_written_again(prepared, tiny, tmp_path):
    """A job reading it (through start_run, as every script does) says why in one line, without a traceback; the
    file is gone, so the next run prepares it again."""
    import subprocess
    import sys

    prepared.write_bytes(prepared.read_bytes()[:200])
    script = ("import sys; sys.argv = ['job']; from shared.pipeline.run import start_run; start_run(); "
              f"from shared.data.images import load_images; load_images({str(prepared)!r})")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert proc.returncode == 1 and TRACEBACK not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"Invalid input: {prepared}: it is not a readable safetensors file")
    assert len(proc.stderr.strip().splitlines()) == 1 and not prepared.exists()
    assert main(["prepare", "tiny", str(prepared), "--cache", str(tiny.cache)]) == 0
    arrays, metadata = data.read_prepared(prepared)
    assert metadata["dataset"] == "tiny" and sorted(arrays) == sorted(data.ARRAY_KEYS)


# ---------------------------------------------------------------- end to end through Snakemake
@pytest.fixture
def workflow(server, tmp_path, monkeypatch):
    """A scratch copy of the workflow without papers, whose `mnist` mirror is the local server; the registry's own
    URLs fail at once through a dead proxy, online or not. Yields (copy, mirror folder for mnist)."""
    www, base_url, _ = server
    (www / "mnist").mkdir()
    for key, value in {"REPLICATIONS_MIRROR": base_url, "http_proxy": "http://127.0.0.1:9",
                       "https_proxy": "http://127.0.0.1:9", "no_proxy": "127.0.0.1"}.items():
        monkeypatch.setenv(key, value)  # the Snakemake run inherits the environment
    return copy_repo(tmp_path / "repo", []), www / "mnist"


def run_data_rule(repo, *args):
    proc = snakemake(repo, "--cores", "1", "data/prepared/mnist.safetensors", *args, timeout=120, rule_blocks=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and TRACEBACK not in out
    assert not (repo / "data" / "prepared" / "mnist.safetensors").exists()
    return out


def test_snakemake_console_shows_why_the_download_failed(workflow):
    repo, mirror = workflow
    for name in data.IDX_FILENAMES:
        (mirror / name).write_bytes(b"not the real file")
    out = run_data_rule(repo, "--profile", "profiles/full")
    assert "Dataset 'mnist' is unavailable" in out and "checksum mismatch" in out and "put it by hand" in out
    for remote in MNIST.files.values():
        assert remote.filename in out and remote.sha256 in out
    assert_cache_verified(repo / "data" / "raw" / "mnist", MNIST.files.values())


def test_snakemake_uses_replications_data_dir_unless_config_names_one(workflow, tmp_path, monkeypatch):
    repo, _ = workflow
    elsewhere, chosen = tmp_path / "elsewhere", tmp_path / "chosen"
    monkeypatch.setenv("REPLICATIONS_DATA_DIR", str(elsewhere))
    stale = elsewhere / "mnist" / "train-labels-idx1-ubyte.gz"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"garbage left by an old crash")
    out = run_data_rule(repo)
    assert str(stale) in out and not stale.exists()  # the env's cache was the one checked (and cleaned)
    assert_cache_verified(elsewhere / "mnist", MNIST.files.values())
    assert not (repo / "data" / "raw").exists()
    out = run_data_rule(repo, "--config", f"data_dir={chosen}")
    assert str(chosen / "mnist" / "train-labels-idx1-ubyte.gz") in out and str(elsewhere) not in out
