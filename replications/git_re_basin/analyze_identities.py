"""Exact properties (Q1, Q2 of the dossier's quick plan):
  * a permuted model computes the same function: max |logits(pi(B)) - logits(B)| over test inputs, for a random pi
    of every hidden layer, in float32 (the claim fixed before the first run) and in float64 (added after it: the
    float32 difference is rounding from the changed order of summation, deviations.md);
  * a planted permutation is recovered (App. A.5): weight_matching(A, pi(A)) returns invert(pi) exactly, for
    `planted` random pi per width; the number of sweeps it ran (including the last, which changes nothing).
"""
import torch

from shared.nn.interpolation import copy_state
from shared.nn.permutation import apply_permutation, invert, random_permutation, weight_matching
from shared.pipeline.run import load_models, start_run, write_metrics

from .common import load_data, pair


def main():
    run = start_run("data", "metrics", "arrays", many=("checkpoints",))
    p = run.params
    data = load_data(run.args.data)
    x = data["x_test"][:p["inputs"]]
    gen = run.generator(0, "identities/permutations")
    m, meta, mismatches, sweeps = {}, None, 0, []
    logit_diff, logit_diff64, logit_scale = [], [], []
    for path in run.args.checkpoints:
        models, specs, meta = load_models(path)
        a, b = pair(models, specs, next(s["d_hidden"] for s in specs.values()))
        width, spec = a.fc[0].out_features, a.spec()
        state_a, state_b = copy_state(a), copy_state(b)
        if width == p["width"]:
            permuted = apply_permutation(spec, random_permutation(spec, state_b, gen), state_b)
            with torch.no_grad():
                before = b(x)
                b.load_state_dict(permuted)
                logit_diff.append(float((b(x) - before).abs().max()))
                logit_scale.append(float(before.abs().max()))
                b.double().load_state_dict(state_b)  # the same check in float64
                before64 = b(x.double())
                b.load_state_dict(permuted)
                logit_diff64.append(float((b(x.double()) - before64).abs().max()))
        for trial in range(p["planted"]):
            planted = random_permutation(spec, state_a, gen)
            found, n = weight_matching(spec, state_a, apply_permutation(spec, planted, state_a),
                                       max_sweeps=p["wm_max_sweeps"], seed=p["match_seed"] + trial)
            wrong = sum(int((found[k] != v).sum()) for k, v in invert(planted).items())
            mismatches += wrong
            sweeps.append(n)
            m[f"planted_sweeps_h{width}_trial{trial}"] = n
            m[f"planted_mismatched_units_h{width}_trial{trial}"] = wrong
    m["permuted_logit_max_abs_diff"] = max(logit_diff)
    m["permuted_logit_max_abs_diff_float64"] = max(logit_diff64)
    m["logit_max_abs"] = max(logit_scale)
    m["planted_mismatched_units"] = mismatches
    m["planted_sweeps_max"] = max(sweeps)
    m["planted_sweeps_min"] = min(sweeps)
    info = {"dtype": "float32", "inputs": len(x), "planted_per_width": p["planted"],
            "sweeps_counting": "every sweep run, including the final one without improvement"}
    write_metrics(run.args.metrics, m, meta, info=info, arrays={"sweeps": torch.tensor(sweeps).numpy()},
                  arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
