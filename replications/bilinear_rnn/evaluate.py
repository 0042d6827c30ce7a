"""Evaluate every run of one experiment across lengths: final-state accuracy of the length-L prefixes of the fixed
test sequences, raw and chance-normalized, at every length of `test.lengths`.

The bilinear models run in mode "exact" (the recurrence as defined, renormalized every step with the scale carried
in log space: the paper's inference-time renormalization, exact for the pure models). Runs with the additive term
are also evaluated the two inexact ways ("renormalize": the scale dropped; "plain": float32 without any
normalization), because their exact function and these two differ.

Every run is also scored on fresh validation sequences at the in-distribution length (the first of `lengths`),
drawn from a stream of their own: its per-step cross-entropy, in the mode the run was trained in, is what picks the
learning rate of a seed (analyze_accuracy), so the choice never reads the test sequences.
"""
import torch
import torch.nn.functional as F

from shared.data.sequence_tasks import sample
from shared.io.files import write_json
from shared.pipeline.run import load_models, start_run
from shared.train.sequences import accuracy_by_position

from .common import majority_rate, normalize, read_tasks, read_test_sets

VALIDATION_SEQUENCES = 512


def main():
    run = start_run("checkpoint", "tasks", "out")
    args, lengths = run.args, run.params["lengths"]
    models, specs, meta = load_models(args.checkpoint)
    tests = read_test_sets(args.tasks)
    validation = {name: sample(task, VALIDATION_SEQUENCES, lengths[0], run.generator(0, f"validation/{name}"))
                  for name, task in read_tasks(args.tasks).items()}
    runs = {}
    for name, model in models.items():
        spec = specs[name]
        tokens, states = tests[spec["task"]]
        chance = majority_rate(states)
        modes = ["exact", "renormalize", "plain"] if spec.get("additive") else [None]
        row = {"task": spec["task"], "seed": spec["seed"], "lr": spec["lr"], "lengths": lengths,
               "chance": [chance[L - 1].item() for L in lengths],
               "val_loss": validation_loss(model, *validation[spec["task"]])}
        for mode in modes:
            acc = accuracy_at(model, tokens, states, lengths, {} if mode is None else {"mode": mode})
            key = mode or "exact"
            row[f"acc_{key}"] = acc
            row[f"norm_{key}"] = [normalize(a, c) for a, c in zip(acc, row["chance"])]
        if spec.get("additive"):
            with torch.no_grad():
                _, log_norm = model.rnn(model.one_hot(tokens[:64]))
            # float32 overflows past |h| ~ 3.4e38 (log 88.7): the step where the plain recurrence breaks down
            over = (log_norm.median(0).values > 88.7).nonzero()
            row["plain_overflow_step"] = int(over[0]) + 1 if len(over) else None
            row["log_norm_growth_per_step"] = (log_norm[:, -1] - log_norm[:, 9]).median().item() / (tokens.shape[1] - 10)
        runs[name] = row
        print(name, " ".join(f"L{L}:{a:.3f}" for L, a in zip(lengths, row["acc_exact"])))
    write_json(args.out, {"experiment": meta["experiment"], "model": meta["runs"][0]["model"], "runs": runs,
                          "train_seconds": meta["wall_seconds"], "tokens_per_second": meta["tokens_per_second"],
                          "device": meta["device"], "steps": meta["steps"]})


@torch.no_grad()
def validation_loss(model, tokens, states):
    """Per-step cross-entropy on validation sequences, in the forward's default (training) mode."""
    model.eval()
    return F.cross_entropy(model(tokens).flatten(0, 1), states.flatten()).item()


def accuracy_at(model, tokens, states, lengths, forward_kw, chunk=256):
    by_position = accuracy_by_position(model, tokens[:, : max(lengths)], states[:, : max(lengths)], chunk, **forward_kw)
    return [by_position[L - 1].item() for L in lengths]


if __name__ == "__main__":
    main()
