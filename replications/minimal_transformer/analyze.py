"""One experiment's metrics: test (and train) accuracy of every arm against its parameter count, the gaps to the
full block (means over seeds of per-seed differences; the arms of a seed see the same batches), the self-similarity
of the trained heads on test images, the untrained networks (rebuilt from their init seeds) as a control, and the
exact identities of the reduced forms in float64 on the trained weights."""
import statistics

import numpy as np
import torch

from shared.io.runtime import seed_everything
from shared.nn.minimal_attention import count_parameters
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics
from shared.train.evaluate import accuracy

from .common import ARMS, REDUCED, load_data
from .model import MODEL_KEYS, build

SELFSIM_ARMS = ("original", "no_mlp", "no_mlp_wqk", "no_mlp_sym_novo", "no_mlp_psd_novo")


@torch.no_grad()
def self_similarity(model, x):
    """Over every layer, head, probe image and token: the fraction of tokens with s_ii < 0 (dissimilar to itself)
    and with s_ii < max_{j != i} s_ij (scored below another token by itself)."""
    neg, below, n = 0, 0, 0
    for block, h in zip(model.blocks, model.attention_inputs(x)):
        s = block.attn.scores(h)  # (B, H, T, T)
        diag = torch.diagonal(s, dim1=-2, dim2=-1)
        others = s.masked_fill(torch.eye(s.shape[-1], dtype=torch.bool), float("-inf")).amax(-1)
        neg += int((diag < 0).sum())
        below += int((diag < others).sum())
        n += diag.numel()
    return neg / n, below / n


@torch.no_grad()
def collapse_error(model, spec, x):
    """max |logits| difference between a trained separate model and the model whose heads hold W_QK = W_Q^T W_K and
    W_VO = W_O W_V (per head), float64."""
    model = model.double()  # in place: the products below are formed in float64
    collapsed = build({**spec, "qk": "collapsed", "vo": "collapsed"}).double()
    state = {k: v for k, v in model.state_dict().items()
             if not any(part in k for part in (".w_q", ".w_k", ".w_v", ".w_o"))}
    for i, block in enumerate(model.blocks):
        state[f"blocks.{i}.attn.w_qk"] = block.attn.qk_matrices()
        state[f"blocks.{i}.attn.w_vo"] = block.attn.vo_matrices()
    collapsed.load_state_dict(state)
    return float((model(x) - collapsed(x)).abs().max())


@torch.no_grad()
def symmetry(model, x):
    """max |s_ij - s_ji| and min s_ii over every layer, head, image and token pair, float64."""
    asym, smallest = 0.0, float("inf")
    for block, h in zip(model.blocks, model.attention_inputs(x)):
        s = block.attn.scores(h)
        asym = max(asym, float((s - s.transpose(-1, -2)).abs().max()))
        smallest = min(smallest, float(torch.diagonal(s, dim1=-2, dim2=-1).min()))
    return asym, smallest


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p, a = run.params, run.params["analysis"]
    seeds = p["spec"]["seeds"]
    data = load_data(run.args.data)
    models, specs, meta = load_models(run.args.checkpoint)
    acc = {name: accuracy(m, data["x_test"], data["y_test"]) for name, m in models.items()}
    train_acc = {name: accuracy(m, data["x_train"], data["y_train"]) for name, m in models.items()}
    untrained = {}
    for name, spec in specs.items():
        seed_everything(derive_seed(spec["seed"], "init"))
        untrained[name] = accuracy(build(spec), data["x_test"], data["y_test"])
    arms = [arm for arm, *_ in ARMS]
    params = {arm: specs[f"{arm}-seed{seeds[0]}"]["params"] for arm in arms}

    def mean(values):
        return statistics.fmean(values)

    m = {f"acc_{arm}": mean(acc[f"{arm}-seed{s}"] for s in seeds) for arm in arms}
    m |= {f"train_acc_{arm}": mean(train_acc[f"{arm}-seed{s}"] for s in seeds) for arm in arms}
    m |= {f"params_{arm}": params[arm] for arm in arms}
    for arm in (*REDUCED, "embed_only"):
        m[f"gap_{arm}"] = mean(acc[f"original-seed{s}"] - acc[f"{arm}-seed{s}"] for s in seeds)
        m[f"saving_{arm}"] = 1 - params[arm] / params["original"]
    # the headline "up to 90% fewer parameters without hurting accuracy": the best attention-only arm among those
    # saving at least 85% of the full model's parameters (fixed before the first run)
    big = [arm for arm in REDUCED if m[f"saving_{arm}"] >= 0.85]
    m["best_gap_saving85"] = min(m[f"gap_{arm}"] for arm in big) if big else float("nan")
    m["collapse_cost"] = m["gap_no_mlp_wqk"] - m["gap_no_mlp"]  # what collapsing W_Q^T W_K costs without the MLP
    m["max_saving"] = max(m[f"saving_{arm}"] for arm in REDUCED)
    m["untrained_acc_max"] = max(untrained.values())
    m["gap_original_minus_untrained"] = mean(acc[f"original-seed{s}"] - untrained[f"original-seed{s}"]
                                             for s in seeds)

    # self-similarity of the trained heads on real inputs (and of the untrained full block)
    probe = data["x_test"][: a["probe_images"]]
    for arm in SELFSIM_ARMS:
        stats = [self_similarity(models[f"{arm}-seed{s}"], probe) for s in seeds]
        m[f"self_negative_{arm}"] = mean(v[0] for v in stats)
        m[f"self_below_{arm}"] = mean(v[1] for v in stats)
    fresh = []
    for s in seeds:
        seed_everything(derive_seed(s, "init"))
        fresh.append(self_similarity(build(specs[f"original-seed{s}"]).eval(), probe))
    m["self_negative_original_untrained"] = mean(v[0] for v in fresh)
    m["self_below_original_untrained"] = mean(v[1] for v in fresh)
    m["self_below_original_minus_psd"] = m["self_below_original"] - m["self_below_no_mlp_psd_novo"]

    # identities, float64 on the trained weights
    xi = data["x_test"][: a["identity_images"]].double()
    m["collapse_max_abs"] = max(collapse_error(models[f"{arm}-seed{s}"], specs[f"{arm}-seed{s}"], xi)
                                for arm in ("original", "no_mlp") for s in seeds)
    sym = [symmetry(models[f"{arm}-seed{s}"].double(), xi) for arm in ("no_mlp_sym_novo", "no_mlp_psd_novo")
           for s in seeds]
    m["symmetric_scores_max_asym"] = max(v[0] for v in sym)
    m["psd_self_score_min"] = min(symmetry(models[f"no_mlp_psd_novo-seed{s}"], xi)[1] for s in seeds)
    m["param_counts_match"] = all(
        sum(t.numel() for t in models[name].parameters()) == spec["params"]
        == count_parameters(**{k: spec[k] for k in MODEL_KEYS}) for name, spec in specs.items())

    arrays = {"arms": np.array(arms), "params": np.array([params[arm] for arm in arms], float),
              "acc": np.array([[acc[f"{arm}-seed{s}"] for s in seeds] for arm in arms]),
              "selfsim_arms": np.array([*SELFSIM_ARMS, "original_untrained"]),
              "self_negative": np.array([*(m[f"self_negative_{arm}"] for arm in SELFSIM_ARMS),
                                         m["self_negative_original_untrained"]]),
              "self_below": np.array([*(m[f"self_below_{arm}"] for arm in SELFSIM_ARMS),
                                      m["self_below_original_untrained"]])}
    info = {"test_images": len(data["x_test"]), "seeds": seeds, "acc": acc, "train_acc": train_acc,
            "untrained_acc": untrained, "arms_saving_85": big, "probe_images": len(probe)}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
