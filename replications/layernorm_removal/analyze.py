"""The removal analysis (every claim): validation cross-entropy of the pretrained model, the naive swap (every LN
made fake with no fine-tuning), each site swapped alone, and the three fine-tuned arms; the reaction task (HellaSwag
analogue) of each, and of the untrained model as a control; sigma_avg at BOS vs the rest; and the float64 identities
on the trained weights: FakeLN = LN when sigma is the input's own std, the folded model's logits = the unfolded
no-LN model's, direct logit attributions summing to the logits for the no-LN model and not for an LN model.
Every number is a mean over seeds of per-seed values (the arms of a seed share pretraining and batches)."""
import copy
import statistics

import numpy as np
import torch

from shared.io.files import read_json
from shared.io.runtime import seed_everything
from shared.nn.norm_removal import FakeLayerNorm, dla_sum_error, fold, remove, remove_all, sites
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics
from shared.train.language_model import evaluate_lm

from .common import ARMS, load_text, reaction_accuracy, val_windows
from .model import build

KINDS = ("ln_2", "ln_1.qk", "ln_1.v")


def kind_of(site):
    return next((k for k in KINDS if site.endswith(k)), site)


@torch.no_grad()
def fake_equals_ln(model, x):
    """max |FakeLN(x_i) - LN(x_i)| over the token vectors x_i of x, FakeLN's sigma set to x_i's own std (float64)."""
    ln = model.blocks[0].ln_2
    fake = FakeLayerNorm(x.shape[-1], ln.eps).double()
    fake.load_state_dict({k: v.double() for k, v in ln.state_dict().items()})
    fake.fake.fill_(1)
    real = copy.deepcopy(fake)
    real.fake.fill_(0)
    err = 0.0
    for v in x.reshape(-1, x.shape[-1])[:64]:
        fake.sigma.fill_(float((v.var(unbiased=False) + ln.eps).sqrt()))
        err = max(err, float((fake(v[None, None]) - real(v[None, None])).abs().max()))
    return err


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p, e = run.params, run.params["eval"]
    _, val_tokens, tokenizer = load_text(run.args.data)
    models, specs, meta = load_models(run.args.checkpoint)
    hist = read_json(run.args.history)["history"]
    n_ctx, n_layer = p["model"]["n_ctx"], p["model"]["n_layer"]
    val = val_windows(val_tokens, e["val_windows"], n_ctx).to(run.device)
    task = val_windows(val_tokens, e["task_windows"], n_ctx)
    ident = val_windows(val_tokens, e["identity_windows"], min(n_ctx, 64))
    per_seed, info = [], {"sites": {}, "task_positions": None}
    for seed in p["seeds"]:
        get = {arm: models[f"{arm}-seed{seed}"].to(run.device) for arm in ("pretrained", *ARMS)}
        ce = {arm: evaluate_lm(m, val) for arm, m in get.items()}
        naive = copy.deepcopy(get["pretrained"])
        remove_all(naive)
        ce["naive"] = evaluate_lm(naive, val)
        naive_bos = copy.deepcopy(get["pretrained"])
        for site in sites(n_layer):
            remove(naive_bos, site)
        ce["naive_bos_kept"] = evaluate_lm(naive_bos, val)
        alone = {}
        for site in sites(n_layer):
            m = copy.deepcopy(get["pretrained"])
            remove(m, site)
            alone[site] = evaluate_lm(m, val) - ce["pretrained"]
        seed_everything(derive_seed(seed, "init"))
        untrained = build(specs[f"pretrained-seed{seed}"]).to(run.device)
        acc = {arm: reaction_accuracy(m, task, tokenizer, run.device)[0] for arm, m in get.items()}
        acc["naive"] = reaction_accuracy(naive, task, tokenizer, run.device)[0]
        acc["untrained"], info["task_positions"] = reaction_accuracy(untrained, task, tokenizer, run.device)
        sigma = hist[str(seed)]["sigma"]
        ratio = {name: s[0] / s[1] for name, s in sigma.items()}
        # identities in float64 on the trained weights
        d = {arm: copy.deepcopy(m).cpu().double() for arm, m in get.items()}
        inputs = d["gradual"].inputs(ident)
        cache = {}
        d["pretrained"](inputs, cache=cache)
        folded = fold(d["gradual"])
        with torch.no_grad():
            fold_err = float((folded(inputs) - d["gradual"](inputs)).abs().max() / d["gradual"](inputs).abs().max())
        means = {k: statistics.fmean(v for s, v in alone.items() if kind_of(s) == k) for k in KINDS}
        per_seed.append({
            **{f"ce_{k}": v for k, v in ce.items()}, **{f"task_acc_{k}": v for k, v in acc.items()},
            "naive_minus_pretrained": ce["naive"] - ce["pretrained"],
            "naive_minus_control": ce["naive"] - ce["control"],
            "gradual_minus_control": ce["gradual"] - ce["control"],
            "gradual_minus_pretrained": ce["gradual"] - ce["pretrained"],
            "all_at_once_minus_control": ce["all_at_once"] - ce["control"],
            "all_at_once_minus_gradual": ce["all_at_once"] - ce["gradual"],
            "gradual_gap_over_naive_gap": (ce["gradual"] - ce["control"]) / (ce["naive"] - ce["pretrained"]),
            "control_minus_gradual_task": acc["control"] - acc["gradual"],
            "control_minus_untrained_task": acc["control"] - acc["untrained"],
            "control_minus_naive_task": acc["control"] - acc["naive"],
            "bos_sigma_ratio_max": max(ratio.values()),
            "bos_sigma_ratio_min": min(ratio.values()),
            **{f"alone_{k}_mean": v for k, v in means.items()}, "alone_ln_f": alone["ln_f"],
            "v_over_other_sensitivity": means["ln_1.v"] / max(means["ln_2"], means["ln_1.qk"]),
            "fakeln_vs_ln_max_abs": fake_equals_ln(d["pretrained"], cache[0, "resid_mid"]),
            "fold_logits_max_rel": fold_err,
            "dla_error_noln": max(dla_sum_error(d["gradual"], inputs), dla_sum_error(d["all_at_once"], inputs)),
            "dla_error_folded": dla_sum_error(folded, inputs),
            "dla_error_ln": min(dla_sum_error(d["pretrained"], inputs), dla_sum_error(d["control"], inputs)),
        })
        info["sites"][str(seed)] = {"sigma": sigma, "bos_ratio": ratio, "alone": alone,
                                    "gradual_events": hist[str(seed)]["gradual"]["events"]}
    keys = per_seed[0].keys()
    m = {k: statistics.fmean(s[k] for s in per_seed) for k in keys}
    m["dla_error_noln"] = max(s["dla_error_noln"] for s in per_seed)
    m["dla_error_folded"] = max(s["dla_error_folded"] for s in per_seed)
    m["fold_logits_max_rel"] = max(s["fold_logits_max_rel"] for s in per_seed)
    m["fakeln_vs_ln_max_abs"] = max(s["fakeln_vs_ln_max_abs"] for s in per_seed)
    m["dla_error_ln"] = min(s["dla_error_ln"] for s in per_seed)
    info["per_seed"] = per_seed
    h0 = hist[str(p["seeds"][0])]
    s0 = info["sites"][str(p["seeds"][0])]
    names = sorted(s0["sigma"])
    arrays = {"arms": np.array(ARMS),
              "curve_steps": np.array([[s for s, _ in h0[arm]["val_curve"]] for arm in ARMS], float),
              "curve_vals": np.array([[v for _, v in h0[arm]["val_curve"]] for arm in ARMS], float),
              "event_steps": np.array([ev["step"] for ev in h0["gradual"]["events"]], float),
              "sites": np.array(names), "sigma": np.array([s0["sigma"][n] for n in names], float)}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print({k: round(v, 5) for k, v in m.items()})


if __name__ == "__main__":
    main()
