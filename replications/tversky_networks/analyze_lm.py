"""The LMs (claims F6, K6, I4): final validation loss and perplexity of each unembedding, the perplexity ratios of
the Tversky unembedding (prototypes tied to the token embedding) to the untied linear and the tied ones, the parameter
counts (declared from the sizes against the built models) and the reduction, and the untrained models' loss."""
import math

import numpy as np

from shared.data.tokens import load_tokens
from shared.io.files import read_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import derive_seed, load_models, start_run, write_metrics
from shared.train.language_model import evaluate_lm, fixed_windows

from .common import lm_params
from .model import build, n_params


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    lm = run.params["lm"]
    models, specs, meta = load_models(run.args.checkpoint)
    history = read_json(run.args.history)["history"]
    _, val_tokens, _ = load_tokens(run.args.data)
    val = fixed_windows(val_tokens, lm["train"]["eval_windows"], lm["model"]["n_ctx"] + 1)
    loss = {name: h[-1]["val_loss"] for name, h in history.items()}
    m = {f"val_loss_{n}": v for n, v in loss.items()}
    m |= {f"ppl_{n}": math.exp(v) for n, v in loss.items()}
    m |= {f"params_{n}": n_params(models[n]) for n in models}
    m["ppl_ratio_tversky_vs_linear"] = math.exp(loss["tversky"] - loss["linear"])
    m["ppl_ratio_tversky_vs_tied"] = math.exp(loss["tversky"] - loss["tied"])
    m["param_reduction_vs_linear"] = 1 - m["params_tversky"] / m["params_linear"]
    m["param_count_mismatch"] = sum(abs(n_params(models[n]) - lm_params(specs[n])) for n in models)
    untrained = {}
    for name, spec in specs.items():
        seed_everything(derive_seed(spec["seed"], "init"))
        untrained[name] = evaluate_lm(build(spec).to(run.device).eval(), val.to(run.device))
    m["untrained_val_loss_min"] = min(untrained.values())
    m["trained_val_loss_max"] = max(loss.values())
    m["trained_minus_untrained_max"] = m["trained_val_loss_max"] - m["untrained_val_loss_min"]
    out = models["tversky"].out
    m["alpha"], m["beta"], m["theta"] = float(out.alpha), float(out.beta), float(out.theta)
    arrays = {"heads": np.array(list(history)),
              "steps": np.array([r["step"] for r in next(iter(history.values()))], float),
              "val_loss": np.array([[r["val_loss"] for r in h] for h in history.values()])}
    info = {"vocab_size": next(iter(specs.values()))["vocab_size"], "untrained_val_loss": untrained}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
