"""Fit the INR dataset of one task and cache it: results/dwsnets/<tier>/data/<task>_inrs.safetensors.

sine: sin(b x) on [-pi, pi], b ~ U(low, high); train and test INRs are fitted as one stacked model, the test ones
first. mnist / fashion_mnist: one INR per image of the registry's prepared file (pixels in [0, 1] on the
[-1, 1]^2 grid), fitted in chunks of `chunk` INRs, each chunk from its own named seed stream.
Keys: "<split>.w1" .. "<split>.bM", "<split>.target" (frequency or label), "<split>.mse" (the fit's final MSE).
"""
import numpy as np
import torch
from safetensors.numpy import save_file

from shared.data import read_prepared
from shared.data.inr import fit_inrs, image_targets, sine_targets, to_arrays
from shared.io.files import atomic_path
from shared.pipeline.run import start_run


def fit_chunks(coords, targets, inr, seed_of, device, chunk):
    parts = []
    for i, start in enumerate(range(0, len(targets), chunk)):
        parts.append(fit_inrs(coords, targets[start:start + chunk], inr["hidden"], inr["n_hidden_layers"], inr["w0"],
                              inr["steps"], inr["lr"], seed=seed_of(i), device=device))
    m = len(parts[0][0])
    return ([torch.cat([p[0][k] for p in parts]) for k in range(m)], [torch.cat([p[1][k] for p in parts]) for k in range(m)],
            torch.cat([p[2] for p in parts]))


def main():
    run = start_run("out", optional=("images",))
    p = run.params
    inr, task = p["inr"], p["task"]
    seed_of = lambda split: lambda i: run.seed(p["seed"], f"inr-{split}-{i}")
    arrays = {}
    if task == "sine":
        s = p["sine"]
        n_test, n_train = s["n_test"], max(s["n_train"])
        coords, targets, freq = sine_targets(n_test + n_train, s["points"], run.seed(p["seed"], "sine"),
                                             s["freq_low"], s["freq_high"])
        w, b, mse = fit_chunks(coords, targets, inr, seed_of("all"), run.device, p["chunk"])
        for split, rows in (("test", slice(0, n_test)), ("train", slice(n_test, None))):
            part = to_arrays([t[rows] for t in w], [t[rows] for t in b], target=freq[rows].float(), mse=mse[rows])
            arrays.update({f"{split}.{k}": v for k, v in part.items()})
    else:
        data, _ = read_prepared(run.args.images[0])
        c = p["classification"]
        for split, n in (("train", c["train_images"]), ("test", c["test_images"])):
            images = data[f"x_{split}"][:n].reshape(min(n, len(data[f"x_{split}"])), -1) / 255.0
            side = round(images.shape[1] ** 0.5)
            coords, targets = image_targets(images, side)
            w, b, mse = fit_chunks(coords, targets, inr, seed_of(split), run.device, p["chunk"])
            part = to_arrays(w, b, target=torch.as_tensor(data[f"y_{split}"][:n]), mse=mse)
            arrays.update({f"{split}.{k}": v for k, v in part.items()})
    with atomic_path(run.args.out) as tmp:
        save_file({k: np.ascontiguousarray(v) for k, v in arrays.items()}, str(tmp),
                  metadata={"task": task, "wall_seconds": f"{run.wall():.1f}", "device": str(run.device)})
    mse = {k: float(v.mean()) for k, v in arrays.items() if k.endswith(".mse")}
    print(f"{task}: {sum(len(v) for k, v in arrays.items() if k.endswith('.target'))} INRs in {run.wall():.1f} s, "
          f"mean fit MSE {mse}")


if __name__ == "__main__":
    main()
