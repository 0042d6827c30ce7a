"""Checkpoints in safetensors (no pickle is ever executed on load), with config and provenance as JSON metadata."""
import json

from safetensors.torch import load_file, safe_open, save_file

from shared.io.files import atomic_path


def save_models(path, models, meta):
    """Write the state dicts of several named models into one file: keys are '<model>/<parameter>'."""
    tensors = {f"{name}/{key}": t.detach().cpu().contiguous() for name, m in models.items() for key, t in m.state_dict().items()}
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp), metadata={"meta": json.dumps(meta, sort_keys=True, default=str)})


def load_state_dicts(path):
    """Return ({model: state_dict}, meta) from a file written by save_models."""
    flat = load_file(str(path))
    states = {}
    for key, tensor in flat.items():
        name, param = key.split("/", 1)
        states.setdefault(name, {})[param] = tensor
    return states, read_meta(path)


def read_meta(path):
    with safe_open(str(path), framework="pt") as f:
        return json.loads((f.metadata() or {}).get("meta", "{}"))
