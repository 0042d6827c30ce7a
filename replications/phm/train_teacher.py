"""Fit every student of common.STUDENTS to its planted teacher (one linear map d -> d, no bias): full-batch Adam on
the training set, float64. One checkpoint, and each student's loss curve."""
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run

from .common import fit_student, teacher_data, teacher_specs
from .model import build


def main():
    run = start_run("checkpoint", "history")
    t = run.params["teacher"]
    specs = teacher_specs(run.params)
    models, history = {}, {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec).double()
        x, y = teacher_data(spec["teacher"], t, spec["seed"], "train")
        history[spec["name"]] = fit_student(model, x, y, t["steps"], t["lr"])
        models[spec["name"]] = model
        print(f"{spec['name']}: final train mse {history[spec['name']][-1]:.3g}", flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment="teacher")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(specs)} students, {meta['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
