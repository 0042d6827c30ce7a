"""Fetching: system folders, then the cache, then the network; nothing that fails its sha256 is kept."""
import gzip
import hashlib
import os
import urllib.request
import zlib
from http.client import HTTPException
from pathlib import Path

from shared.data.registry import REGISTRY
from shared.io.files import atomic_path

DOWNLOAD_TIMEOUT_S = 30
DEFAULT_MAX_BYTES = 4 << 30  # a file with no cap of its own: above the largest (TinyStories train, 2.2 GB)
CHUNK = 1 << 20


class DatasetUnavailable(RuntimeError):
    """No source (local folder, cache, mirror or URL) produced a file with the pinned checksum."""


class DataCorrupted(RuntimeError):
    """A verified file changed before it was read, or a prepared file does not match what it recorded."""


class ChecksumMismatch(ValueError):
    pass


class TooLarge(ValueError):
    pass


def default_cache_dir():
    return Path(os.environ.get("REPLICATIONS_DATA_DIR") or "data/raw")


def sha256_of(path, gunzip=False):
    digest = hashlib.sha256()
    with (gzip.open if gunzip else open)(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
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


def identity(path):
    """What changes when a file is replaced (device, inode) or rewritten (size, mtime): taken before a file is
    hashed and compared after it was read, so a file swapped in between is never loaded as verified."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def candidate_urls(dataset, remote):
    # The mirror mirrors the cache layout (<mirror>/<dataset>/<file>), so MNIST and
    # Fashion-MNIST, which share file names, never collide.
    mirror = os.environ.get("REPLICATIONS_MIRROR")
    extra = (f"{mirror.rstrip('/')}/{dataset.name}/{remote.filename}",) if mirror else ()
    return extra + remote.urls


def _copy_capped(response, out, cap):
    """Copy at most `cap` bytes; one byte more means the file is over the cap (the server may not say its size)."""
    total = 0
    while chunk := response.read(min(CHUNK, cap + 1 - total)):
        total += len(chunk)
        if total > cap:
            raise TooLarge(f"exceeds the download cap of {cap} bytes (stopped after {total} bytes)")
        out.write(chunk)


def _download(url, target, remote):
    """Download into a temp file beside `target`; it becomes `target` only if verified. Returns (sha256, identity)."""
    cap = remote.max_bytes or DEFAULT_MAX_BYTES
    with atomic_path(target) as tmp:  # whatever fails below, the temp file is removed
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response, open(tmp, "wb") as out:
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > cap:
                raise TooLarge(f"exceeds the download cap of {cap} bytes (Content-Length: {length})")
            _copy_capped(response, out, cap)
        before = identity(tmp)  # a rename keeps device, inode, size and mtime
        digest = verified_sha256(tmp, remote)
        if digest is None:
            raise ChecksumMismatch(f"got sha256 {sha256_of(tmp)}, expected {remote.sha256}")
    return digest, before


def _fetch_file(dataset, remote, cache_folder, tried):
    """Return (path, sha256, identity) of a verified copy, or None; each source tried and why it failed is
    appended to `tried` as (source, reason)."""
    for folder in dataset.local_dirs:
        path = Path(folder) / remote.filename
        if path.is_file():
            before = identity(path)
            if digest := verified_sha256(path, remote):
                return path, digest, before
            # a system copy that fails is not ours to delete; just skip it
            tried.append((str(path), "checksum mismatch (local copy, skipped)"))
    target = cache_folder / remote.filename
    if target.is_file():
        before = identity(target)
        if digest := verified_sha256(target, remote):
            return target, digest, before
        target.unlink()  # corrupt cache entry: drop it and fetch again
        tried.append((str(target), "checksum mismatch (cached copy, deleted)"))
    for url in candidate_urls(dataset, remote):
        try:
            return (target, *_download(url, target, remote))
        except ChecksumMismatch as error:
            tried.append((url, f"checksum mismatch: {error} (download removed)"))
        except (OSError, HTTPException, ValueError) as error:  # URLError/timeouts are OSErrors
            tried.append((url, str(error)))
    return None


def fetch(name, cache_dir=None):
    """Return {role: path} of verified files for dataset `name`, downloading what is missing."""
    return {role: found[0] for role, found in _fetch_verified(name, cache_dir).items()}


def _fetch_verified(name, cache_dir):
    """{role: (path, sha256 of that file, its identity when verified)}; raises DatasetUnavailable listing every
    missing file with each source tried and why it failed."""
    dataset = REGISTRY[name]
    cache_folder = Path(cache_dir or default_cache_dir()) / name
    found, lines = {}, []
    for role, remote in dataset.files.items():
        tried = []
        result = _fetch_file(dataset, remote, cache_folder, tried)
        if result is None:
            lines += _missing_lines(dataset, remote, cache_folder, tried)
        else:
            found[role] = result
    if lines:
        n_missing = len(dataset.files) - len(found)
        header = f"Dataset '{name}' is unavailable: {n_missing} file(s) could not be found or downloaded."
        raise DatasetUnavailable("\n".join([header, *lines]))
    return found


def _missing_lines(dataset, remote, cache_folder, tried):
    # Every source with its own error: a checksum mismatch from a mirror must not hide behind a later URL's DNS error.
    lines = [f"  {remote.filename}", f"    sha256: {remote.sha256}"]
    if dataset.local_dirs:
        lines.append(f"    also looked in: {', '.join(dataset.local_dirs)}")
    lines += [f"    tried {source}: {reason}" for source, reason in tried] or ["    tried: no source to try (no URL)"]
    lines.append(f"    put it by hand at: {(cache_folder / remote.filename).absolute()}")
    return lines


def check_unchanged(name, found, cache_dir=None):
    """Raise DataCorrupted if a file of `found` (from _fetch_verified) was replaced or rewritten since it was
    verified; a changed file in our cache that no longer verifies is removed, so the next run fetches it again."""
    dataset, cache_folder = REGISTRY[name], Path(cache_dir or default_cache_dir()) / name
    changed = [role for role, (path, _, before) in found.items() if _identity_or_none(path) != before]
    for role in changed:
        path, remote = found[role][0], dataset.files[role]
        if path.parent == cache_folder and path.is_file() and not verified_sha256(path, remote):
            path.unlink()
    if changed:
        paths = ", ".join(str(found[role][0]) for role in changed)
        raise DataCorrupted(f"Dataset '{name}': {paths} changed after its sha256 was verified and before it was "
                            f"read (replaced or rewritten by something else); nothing was written. Rerun to verify "
                            f"it again.")


def _identity_or_none(path):
    try:
        return identity(path)
    except FileNotFoundError:
        return None
