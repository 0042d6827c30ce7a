"""Fig. 3 and the stages (claims F1-F8, I1, I2, K1): the grok run (eta on/off, stage statistics recorded during
training) and the eta = 0 width test, read from the training histories and the final checkpoints.

Grokking delay: first step with test accuracy >= grok_test over the first step with train accuracy 1.0. Stage I:
||G_F|| / ||Y|| at the ridge-optimal top layer (feature_stages.backprop_signal) on the training pairs. Stage II:
common.feature_stats on the final weights. Stage III: repulsion_agreement and gram_distance on the final hidden
features of the training pairs.
"""
import numpy as np
import torch

from shared.io.files import read_json
from shared.nn import feature_stages as fs
from shared.nn.group_analysis import unit_alignment
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.train.full_batch import first_step_reaching

from .common import components_of, feature_stats, split, table


def arr(history, key):
    """A history entry as float64; the JSON writer stores the skipped (nan) stage entries as strings."""
    rows = [[float(v) if v is not None else float("nan") for v in row] for row in history[key]]
    return torch.tensor(rows, dtype=torch.float64)


def final_hidden(model, spec, i):
    order = spec["order"]
    _, a, b, _ = table(order)
    m = spec["members"][i]
    mask = split(order, m["fraction"], m["seed"], f"split/{order}/{m['fraction']:.6f}")
    with torch.no_grad():
        return model.hidden(a, b)[i][mask]


def main():
    run = start_run("grok", "grok_history", "width", "width_history", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.grok)
    model, spec = models["grok"], specs["grok"]
    h = read_json(run.args.grok_history)["history"]["grok"]
    steps = torch.tensor(h["step"])
    train, test, gf = arr(h, "train_acc"), arr(h, "test_acc"), arr(h, "gf_ridge")
    etas = np.array([m["eta"] for m in spec["members"]])
    pos, zero = np.nonzero(etas > 0)[0], np.nonzero(etas == 0)[0]
    fit_step = first_step_reaching(steps, train, 1.0).numpy()
    grok_step = first_step_reaching(steps, test, p["grok_test"]).numpy()
    final_test = test[-1].numpy()
    paper_eta = 2e-4 if np.any(np.isclose(etas, 2e-4)) else etas[pos].min()

    growth, growth_from_min = [], []
    for i in np.nonzero(np.isclose(etas, paper_eta))[0]:
        if np.isnan(fit_step[i]):
            growth.append(float("nan"))
            continue
        t0 = int(np.nonzero(steps.numpy() == fit_step[i])[0][0])
        growth.append(float(gf[t0:, i].max() / gf[t0, i]))
        low = t0 + int(gf[t0:, i].argmin())  # post hoc (deviations.md): growth from the minimum after t_train
        growth_from_min.append(float(gf[low:, i].max() / gf[low, i]))

    components = components_of(spec["order"])
    projectors = np.stack([c.projector for c in components])
    eye = np.eye(spec["order"])
    cross = max((np.abs(projectors[i] @ projectors[j]).max() for i in range(len(projectors))
                 for j in range(len(projectors)) if i != j), default=0.0)
    projector_err = float(max(np.abs(projectors.sum(0) - eye).max(), cross))

    features, repulsion, gram = [], [], []
    for i in range(len(etas)):
        features.append(feature_stats(model.member_state(i), components, p["purity"], p["norm_share"]))
        f = final_hidden(model, spec, i)
        repulsion.append(fs.repulsion_agreement(f, float(etas[i]), p["grok"]["top_pairs"]))
        gram.append(fs.gram_distance(f))
    rep_hist = arr(h, "repulsion")

    # width test (eta = 0)
    _, w_specs, _ = load_models(run.args.width)
    wh = read_json(run.args.width_history)["history"]
    labels = sorted(w_specs, key=lambda k: w_specs[k]["width"])
    widths = np.array([w_specs[k]["width"] for k in labels])
    n_train = w_specs[labels[0]]["n_train"][0]
    width_final = np.stack([np.array(wh[k]["test_acc"][-1]) for k in labels])  # (widths, seeds)
    width_gf_final = np.stack([np.array(wh[k]["gf_ridge"][-1]) for k in labels])

    gf_eta0 = gf[:, zero].max().item() if spec["width"] >= max(spec["n_train"]) else float("nan")
    m = {
        "test_final_eta_pos_min": float(final_test[pos].min()),
        "test_final_eta0_max": float(final_test[zero].max()),
        "delay_ratio_min": float(np.min(grok_step[pos] / fit_step[pos])),
        "gf_growth_min": float(min(growth)),
        "gf_growth_from_min_min": float(min(growth_from_min)) if growth_from_min else float("nan"),
        "pure_frac_min": float(min(features[i]["pure_frac"] for i in pos)),
        "repulsion_final_min": float(min(repulsion[i] for i in pos)),
        "repulsion_init_min": float(rep_hist[0, pos].min()),
        "width_small_test_median": float(np.median(width_final[0])),
        "width_large_test_max": float(width_final[-1].max()),
        "width_small_train_final_min": float(min(wh[labels[0]]["train_acc"][-1])),
        "width_small_gf_final_min": float(width_gf_final[0].min()),
        "width_at_n_test_max": float(width_final[np.argmin(np.abs(widths - n_train))].max()),
        "gf_ridge_eta0_max": gf_eta0,
        "projector_err": projector_err,
        "train_fit_step_max": float(fit_step[pos].max()),
        "test_init_max": float(test[0].max()),
        "n_train": int(spec["n_train"][0]),
        "width": int(spec["width"]),
    }
    for i, mem in enumerate(spec["members"]):
        tag = f"eta{mem['eta']:g}_s{mem['seed']}"
        m[f"grok_step_{tag}"] = float(grok_step[i])
        m[f"fit_step_{tag}"] = float(fit_step[i])
        m[f"test_final_{tag}"] = float(final_test[i])
        m[f"pure_frac_{tag}"] = features[i]["pure_frac"]
        m[f"frequencies_{tag}"] = features[i]["frequencies"]
        m[f"top_units_{tag}"] = features[i]["top_units"]
        m[f"repulsion_{tag}"] = repulsion[i]
        m[f"gram_distance_{tag}"] = gram[i]
    for k, w in zip(labels, widths):
        m[f"width_test_final_median_K{w}"] = float(np.median(width_final[list(labels).index(k)]))

    # one eta > 0 member's units for the features figure
    show = int(np.nonzero(np.isclose(etas, paper_eta))[0][0])
    al = unit_alignment({k: v for k, v in model.member_state(show).items()}, components)
    arrays = {
        "steps": steps.numpy(), "train_acc": train.numpy(), "test_acc": test.numpy(), "gf_ridge": gf.numpy(),
        "gf_actual": arr(h, "gf_actual").numpy(), "pure_frac": arr(h, "pure_frac").numpy(),
        "repulsion": rep_hist.numpy(), "gram_distance": arr(h, "gram_distance").numpy(), "etas": etas,
        "seeds": np.array([mm["seed"] for mm in spec["members"]]),
        "width_steps": np.array(wh[labels[0]]["step"]), "widths": widths, "n_train": np.array(n_train),
        "width_test": np.stack([np.array(wh[k]["test_acc"]) for k in labels]),
        "width_gf": np.stack([np.array(wh[k]["gf_ridge"]) for k in labels]), "width_gf_final": width_gf_final,
        "unit_purity": al["purity"], "unit_norm": al["norm"], "unit_component": al["component"],
        "unit_same": al["same_component"].astype(float), "show_eta": np.array(etas[show]),
    }
    info = {"order": spec["order"], "members": spec["members"], "paper_eta": float(paper_eta),
            "widths": widths.tolist(), "width_n_train": n_train}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print({k: v for k, v in m.items() if not k.startswith(("grok_step_", "fit_step_", "top_units_"))})


if __name__ == "__main__":
    main()
