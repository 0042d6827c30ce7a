"""Section 4.3, Fig 6: the similarity-to-target task (S-CASPER).

The bias model's layer is augmented (z' = [E x, 1], dossier section 3 item 10) and its interaction matrix for an
output direction u is eigendecomposed: u = e_True - e_False (the paper's text) and u = e_True (the authors' code).
Eigenvectors are projected to pixels, v~ = E'^T v with E' = blockdiag(E, 1): its pixel part E^T v[:d] is what is
drawn; v[d] weighs the constant. Fixed before the run:
  top_eig_ratio: the most positive eigenvalue over the largest |eigenvalue| among all the others;
  top_eigvec_cos_centred: |cos| of the top eigenvector's pixel part with target - mean(target) (the sign of an
    eigenvector is arbitrary; centring removes the all-ones component, which the target and its complement share and
    which therefore does not tell them apart);
  acc_bias_minus_nobias: test accuracy of the bias model minus the bias-free one, in points.
"""
import torch

from shared.data.images import load_images
from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics

from .target_task import relabel

SHOWN = 3  # eigenvectors drawn from each end of the spectrum
DIRECTIONS = {"true_minus_false": (-1.0, 1.0), "true": (0.0, 1.0)}  # classes: 0 = False, 1 = True


def cos(a, b):
    return (a @ b / (a.norm() * b.norm())).abs().item()


def decompose(model, direction, quadratic_only=False):
    """Signed eigenvalues (most positive first), eigenvectors in the (augmented) embedding space, their pixel parts and
    whether the last coordinate is the constant one. quadratic_only drops the constant coordinate's row and column
    (the linear and constant terms): a diagnostic, not the paper's method."""
    left, right = analysis.layer_weights(model.mixer)  # (d, d [+1]): acting on [E x, 1] when the layer has biases
    u = torch.tensor(direction, dtype=torch.float64)
    q = analysis.interaction_matrix(left, right, model.head.weight.double(), u)
    embed = model.embed.weight.double()
    d = embed.shape[0]
    if quadratic_only:
        q = q[:d, :d]
    vals, vecs = analysis.eigendecompose(q, order="signed")
    return q, vals, vecs, vecs[:, :d] @ embed, q.shape[-1] > d


def spectrum_metrics(vals, vecs, pixels, augmented, target):
    others = vals[1:]
    lam2 = others[others.abs().argmax()]
    top = pixels[0]
    return {
        "lambda1": vals[0].item(),
        "lambda2": lam2.item(),  # the next-largest by magnitude, of either sign
        "lambda_min": vals[-1].item(),
        "top_eig_ratio": (vals[0] / lam2.abs()).item(),
        "top_energy_fraction": (vals[0] ** 2 / vals.pow(2).sum()).item(),
        "top_eigvec_cos_centred": cos(top, target - target.mean()),
        "top_eigvec_cos_raw": cos(top, target),
        "top_eigvec_cos_contrast": cos(top, 2 * target - 1),  # target - (1 - target)
        # weight of the top and of the most negative (unit) eigenvector on the constant coordinate
        "top_eigvec_constant_weight": abs(vecs[0, -1].item()) if augmented else 0.0,
        "bottom_eigvec_constant_weight": abs(vecs[-1, -1].item()) if augmented else 0.0,
    }


def main():
    run = start_run("checkpoint", "data", "metrics", "arrays")
    args = run.args
    models, specs, meta = load_models(args.checkpoint)
    task = specs["bias"]["task"]
    data = relabel(load_images(args.data, layout="hwc_flat"), task)
    target = data["target"].double()
    y_train, y_test = data["y_train"], data["y_test"]
    acc = {name: meta["final"][name]["test_acc"] for name in models}

    metrics = {
        "target_index": data["target_index"],
        "target_digit": task["target_digit"],
        "positive_fraction_train": y_train.double().mean().item(),
        "positive_fraction_test": y_test.double().mean().item(),
        "majority_baseline_acc": max(y_test.double().mean().item(), 1 - y_test.double().mean().item()),
        "acc_bias": acc["bias"],
        "acc_nobias": acc["nobias"],
        "acc_bias_minus_nobias": 100 * (acc["bias"] - acc["nobias"]),
    }
    arrays = {"target": target.numpy()}
    embed = models["bias"].embed.weight.double()
    for key, direction in DIRECTIONS.items():
        q, vals, vecs, pixels, augmented = decompose(models["bias"], direction)
        suffix = "" if key == "true_minus_false" else "_true_only"
        metrics.update({k + suffix: v for k, v in spectrum_metrics(vals, vecs, pixels, augmented, target).items()})
        metrics["constant_term" + suffix] = q[-1, -1].item()  # the bias-bias interaction: the logit difference at x = 0
        arrays[f"vals_{key}"] = vals.numpy()
        arrays[f"top_{key}"] = pixels[:SHOWN].numpy()
        arrays[f"bottom_{key}"] = pixels[-SHOWN:].flip(0).numpy()  # most negative first
        arrays[f"linear_{key}"] = (2 * q[:-1, -1] @ embed).numpy()  # the linear term's pixel weights
    # diagnostics: the bias model without its constant coordinate, and the model trained without biases
    for suffix, model, quadratic_only in (("_quadratic", models["bias"], True), ("_nobias", models["nobias"], False)):
        q, vals, vecs, pixels, augmented = decompose(model, DIRECTIONS["true_minus_false"], quadratic_only)
        metrics.update({k + suffix: v for k, v in spectrum_metrics(vals, vecs, pixels, augmented, target).items()})
        arrays["vals" + suffix] = vals.numpy()
        arrays["top" + suffix] = pixels[:SHOWN].numpy()

    write_metrics(args.metrics, metrics, meta, info={"task": task}, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
