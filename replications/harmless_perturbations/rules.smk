# harmless_perturbations: Contrasting Adversarial Perturbations: The Space of Harmless Perturbations (Chen, Li,
# Huang, Yang, Li, Li, Luo; arXiv 2402.02095).
# Stages: data (the shared prepare_dataset rule) -> train (one job per kind: mlp, cnn) -> analyze (declared in
# pipeline.py) -> figures -> report. The analyze, figure and report rules are shared.
from shared.pipeline.paper import step_shell

from replications.harmless_perturbations.pipeline import checkpoint_path, data_path

P = config["paper"]


wildcard_constraints:
    kind="mlp|cnn",


rule train:
    input:
        code=P.code("train"),
        data=data_path(P),
    output:
        checkpoint=checkpoint_path(P, "{kind}"),
        history=P.out("models/{kind}.json"),
    log:
        P.log("train_{kind}"),
    priority: 1  # long jobs first, so that the cores stay busy to the end
    threads: P.threads("train")
    resources:
        **P.resources("train"),
    params:
        **P.step("train"),
        # this job's slice of the config: editing the CNN does not retrain the MLPs
        p=lambda w: P.params(
            {
                "kind": w.kind,
                w.kind: P.cfg[w.kind],
                **{k: P.cfg[k] for k in ("device", "d_input", "n_classes", "image_shape", "optim")},
            }
        ),
    shell:
        step_shell()
