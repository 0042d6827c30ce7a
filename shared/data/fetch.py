"""Fetching: system folders, then the cache, then the network; nothing that fails its sha256 is kept.

Downloads go through pooch (`pooch.retrieve` with the pinned sha256): it writes to a temp file beside the target and
renames it into place only if the hash matches, deleting it otherwise. The sources, their order, the caps and the
messages are this module's: local copies and the cache first, then $REPLICATIONS_MIRROR, then the registry's URLs,
every source tried listed with its own error."""
import gzip
import hashlib
import os
import sys
import time
import urllib.error
import urllib.request
import zlib
from http.client import HTTPException, IncompleteRead, RemoteDisconnected
from pathlib import Path

import pooch
from tqdm import tqdm

from shared.data.registry import REGISTRY

DOWNLOAD_TIMEOUT_S = 30
DEFAULT_MAX_BYTES = 4 << 30  # a file with no cap of its own: above the largest (TinyStories train, 2.2 GB)
CHUNK = 1 << 20
RETRIES = 2  # more tries of one URL after a transient error (a timeout, a dropped connection, a 5xx)
RETRY_WAIT_S = 2.0  # before the first retry; twice that before the second


class DatasetUnavailable(RuntimeError):
    """No source (local folder, cache, mirror or URL) produced a file with the pinned checksum."""


class DataCorrupted(RuntimeError):
    """A verified file changed before it was read, or a prepared file does not match what it recorded."""


class DataRefused(ValueError):
    """Intact data that does not fit the protocol a paper states (say, test entities that training never saw)."""


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


def _copy_capped(response, out, cap, digest, bar):
    """Copy at most `cap` bytes; one byte more means the file is over the cap (the server may not say its size)."""
    total = 0
    while chunk := response.read(min(CHUNK, cap + 1 - total)):
        total += len(chunk)
        if total > cap:
            raise TooLarge(f"exceeds the download cap of {cap} bytes (stopped after {total} bytes)")
        out.write(chunk)
        digest.update(chunk)
        bar.update(len(chunk))


def _transient(error):
    """Worth another try: a timeout, a connection cut mid-transfer, or a server that is busy (429, 5xx). A 404, a
    refused connection or an unknown host fails the same way again, so the next source is tried instead."""
    if isinstance(error, urllib.error.HTTPError):
        return error.code == 429 or error.code >= 500
    if isinstance(error, urllib.error.URLError):
        error = error.reason
    return isinstance(error, (TimeoutError, ConnectionResetError, ConnectionAbortedError, IncompleteRead,
                              RemoteDisconnected))


class CappedDownloader:
    """A pooch downloader (`downloader(url, output_file, pooch)`) over urllib that keeps a size cap.

    pooch's own HTTPDownloader (requests) has no size limit, so this one refuses a Content-Length over the cap up
    front and stops copying one byte past it; it retries transient errors RETRIES times, draws a tqdm bar on a
    terminal (nothing in a log file), and records the sha256 and the identity of the file it wrote: pooch hashes
    that file and renames it into place (the rename keeps device, inode, size and mtime), so the identity is that
    of the verified file unless something swapped it in between (check_unchanged)."""

    def __init__(self, cap):
        self.cap, self.sha256, self.identity = cap, None, None

    def __call__(self, url, output_file, pooch_instance=None):
        for attempt in range(RETRIES + 1):
            try:
                return self._download(url, output_file)
            except TooLarge:
                raise
            except (OSError, HTTPException) as error:
                if attempt == RETRIES or not _transient(error):
                    raise
                time.sleep(RETRY_WAIT_S * (attempt + 1))

    def _download(self, url, output_file):
        name = url.rsplit("/", 1)[-1]
        with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as response, open(output_file, "wb") as out:
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > self.cap:
                raise TooLarge(f"exceeds the download cap of {self.cap} bytes (Content-Length: {length})")
            digest = hashlib.sha256()
            with tqdm(total=int(length) if length.isdigit() else None, desc=name, unit="B", unit_scale=True,
                      file=sys.stderr, disable=None, mininterval=1, leave=False) as bar:  # disable=None: no tty, no bar
                _copy_capped(response, out, self.cap, digest, bar)
        os.chmod(output_file, 0o666 & ~_umask())  # pooch's temp file is 0600; the cache is as readable as any file
        self.sha256, self.identity = digest.hexdigest(), identity(output_file)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _download(url, target, remote):
    """Download `url` with pooch into a temp file beside `target`, which pooch renames to `target` only if its sha256
    is the pin (and deletes otherwise). Returns (sha256, identity) of the verified file.

    A download is verified by its exact sha256: raw_sha256 (the gunzipped payload) only accepts local copies."""
    downloader = CappedDownloader(remote.max_bytes or DEFAULT_MAX_BYTES)
    try:
        pooch.retrieve(url, known_hash=f"sha256:{remote.sha256}", fname=target.name, path=target.parent,
                       downloader=downloader)
    except TooLarge:
        raise
    except ValueError as error:
        if downloader.sha256 is None or downloader.sha256 == remote.sha256:  # not pooch's hash check
            raise
        raise ChecksumMismatch(f"got sha256 {downloader.sha256}, expected {remote.sha256}") from error
    if downloader.identity is None:  # pooch found a verified file already there (another process put it): check it
        before = identity(target)
        if verified_sha256(target, remote) != remote.sha256:
            raise ChecksumMismatch(f"{target} changed while it was fetched")
        return remote.sha256, before
    return remote.sha256, downloader.identity


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
