"""The tiers a paper runs at, and the hash that names a resolved config (a leaf: imports nothing of ours)."""
import hashlib
import json

TIERS = ("quick", "full")


def config_hash(cfg):
    """Short, stable hash of a resolved config (key order does not matter)."""
    blob = json.dumps(cfg, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
