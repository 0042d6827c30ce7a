"""HOSVD of the class tensor (section 3.3, App D): B (10, d, d) reshaped to (10, d^2) and decomposed.

App D reads direction 1 as separating vertical-stroke digits (1, 4, 7) from horizontal ones (mainly 5). Scored as:
u_1 has one sign on digits 1, 4, 7 and the opposite sign on 5 (the overall sign of a singular vector is arbitrary,
relative signs are not), and each of these four digits contributes, |u_1| above the threshold at which the authors'
App D figure colours a contribution (0.3). A uniformly random unit vector in R^10 passes with probability about
0.0011 (the sign pattern alone: 1/8, reported beside it as direction1_sign_pattern).
"""

from shared.nn import bilinear_analysis as analysis
from shared.pipeline.run import load_models, start_run, write_metrics


def main():
    run = start_run("checkpoint", "metrics", "arrays")
    args = run.args
    models, _, meta = load_models(args.checkpoint)
    model = models["bilinear"]
    q = model.interaction_matrices()
    u, s, qk = analysis.hosvd(q)
    first = u[:, 0]
    vertical = [first[i].sign().item() for i in (1, 4, 7)]
    sign_pattern = len(set(vertical)) == 1 and first[5].sign().item() == -vertical[0]
    contributes = all(abs(first[i].item()) > args.params["hosvd_contribution"] for i in (1, 4, 5, 7))
    vals, vecs = analysis.eigendecompose(qk[:3])
    pixel = analysis.project_to_input(vecs[:, :4], model.embed.weight.double())
    energy = s.pow(2) / s.pow(2).sum()
    metrics = {
        "direction1_vertical_vs_horizontal": bool(sign_pattern and contributes),
        "direction1_sign_pattern": bool(sign_pattern),  # the earlier check: passes by chance with probability 1/8
        "top1_energy": energy[0].item(),
        "top2_energy": energy[:2].sum().item(),
        **{f"direction1_u_digit{i}": first[i].item() for i in range(first.shape[0])},
    }
    arrays = {"singular_values": s.numpy(), "contributions": u[:, :3].numpy(), "eigvals": vals[:, :4].numpy(),
              "eigvecs": pixel.numpy()}
    write_metrics(args.metrics, metrics, meta, arrays=arrays, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
