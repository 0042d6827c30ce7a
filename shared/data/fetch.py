"""Fetching: system folders, then the cache, then the network; nothing that fails its sha256 is kept."""
import gzip
import hashlib
import os
import shutil
import urllib.request
import zlib
from http.client import HTTPException
from pathlib import Path

from shared.data.registry import REGISTRY
from shared.io.files import atomic_path

DOWNLOAD_TIMEOUT_S = 30

class DatasetUnavailable(RuntimeError):
    """No source (local folder, cache, mirror or URL) produced a file with the pinned checksum."""


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


