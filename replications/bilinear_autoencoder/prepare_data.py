"""The activations this paper's autoencoders decompose, as results/bilinear_autoencoder/<tier>/data/<name>.safetensors.

planted: generated manifolds with ground truth (planted.py).
mnist_bilinear: the hidden representation entering the bilinear layer of the flagship's trained MNIST classifier
  (replications/bilinear_mlp, experiment `size`), z = W_embed x on the MNIST-5k images: read from the flagship's
  checkpoint (safetensors, no pickle), not retrained. Labels are the digits. The rule passes the checkpoint and
  the images as --checkpoint / --images (paths computed from bilinear_mlp's config, see pipeline.py).
The planted training split is drawn from the dataset's seed, the held-out split from its "test" stream.
"""
import json

import numpy as np
import torch

from shared.data import read_prepared, write_safetensors
from shared.io.checkpoints import load_state_dicts
from shared.pipeline.run import start_run

from .planted import generate, layout


def flagship_activations(checkpoint, images, run):
    states, meta = load_state_dicts(checkpoint)
    if run not in states:
        raise SystemExit(f"{checkpoint}: no run {run!r} (runs: {', '.join(sorted(states))})")
    embed = states[run]["embed.weight"].double()
    arrays, _ = read_prepared(images)
    out = {}
    for split in ("train", "test"):
        x = torch.from_numpy(arrays[f"x_{split}"]).reshape(len(arrays[f"x_{split}"]), -1).double() / 255.0
        out[f"x_{split}"] = (x @ embed.T).float().numpy()  # the classifier's pixels in [0, 1], as it was trained
        out[f"y_{split}"] = arrays[f"y_{split}"].astype(np.int64)
    return out


def main():
    run = start_run("out", optional=("checkpoint", "images"))
    p = run.params  # {"name", "spec", "device"}
    spec = p["spec"]
    if spec["source"] == "planted":
        arrays, meta = {}, {"components": json.dumps(layout(spec["counts"]))}
        for split, n, seed in (("train", spec["train"], spec["seed"]), ("test", spec["test"], run.seed(spec["seed"], "test"))):
            x, amplitude, phase, blocks = generate(n, spec["d"], spec["counts"], spec["p_active"], spec["noise"],
                                                   seed, spec["basis_seed"])
            arrays |= {f"x_{split}": x, f"amplitude_{split}": amplitude, f"phase_{split}": phase}
        arrays["blocks"] = blocks
    else:
        (checkpoint,), (images,) = run.args.checkpoint, run.args.images
        arrays = flagship_activations(checkpoint, images, spec["run"])
        meta = {"source": checkpoint, "run": spec["run"]}
    write_safetensors(arrays, run.args.out, {"name": p["name"], **meta})
    print({k: v.shape for k, v in arrays.items()})


if __name__ == "__main__":
    main()
