"""Stochastic-gradient noise ||g_B - g_full|| at initialisation (claim A2), and its Gaussian control.

The model is the setting's at init (seed `noise_seed`, as the code's seed 1). Tail statistics of the norms
(skewness, excess kurtosis, p99/median) are compared with those of the norms of Gaussian vectors with the noise
vectors' empirical mean and covariance (shared.train.diagnostics.gaussian_surrogate_norms).
"""

from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run, write_metrics
from shared.train import diagnostics as diag

from .common import loss_fn, sampler
from .model import build


def main():
    run = start_run("metrics", "arrays")
    p = run.params
    s = p["setting"]
    seed_everything(run.seed(p["noise_seed"], "init"))
    model = build({"d": p["d"], "layers": s["layers"], "init_std": p["init_std"]}).to(run.device)
    gen = run.generator(p["noise_seed"], "noise")
    norms, vectors = diag.gradient_noise_samples(model, loss_fn, sampler(p["d"], p["n"], s["covariates"],
                                                                         p["gamma_shape"]),
                                                 p["noise_batch"], p["noise_full_batch"], p["noise_samples"], gen,
                                                 return_vectors=True)
    surrogate = diag.gaussian_surrogate_norms(vectors.cpu(), p["surrogate_samples"], run.generator(p["noise_seed"],
                                                                                                 "surrogate"))
    noise, gauss = diag.tail_statistics(norms.cpu()), diag.tail_statistics(surrogate)
    metrics = {**noise, **{f"surrogate_{k}": v for k, v in gauss.items()},
               "kurtosis_gap": noise["excess_kurtosis"] - gauss["excess_kurtosis"],
               "skewness_gap": noise["skewness"] - gauss["skewness"]}
    write_metrics(run.args.metrics, metrics, info={"samples": p["noise_samples"], "B": p["noise_batch"],
                                                        "full_batch": p["noise_full_batch"]},
                  arrays={"norms": norms.cpu().numpy(), "surrogate": surrogate.numpy()}, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
