"""Train the transformer LM once per unembedding (untied linear, tied embedding, Tversky with prototypes tied to the
embedding) on the stories, the same seed and data order for each; save the models and their loss histories."""
from shared.data.tokens import load_tokens
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.language_model import LMSchedule, fixed_windows, train_lm

from .common import lm_specs
from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    m = run.params["lm"]
    t = m["train"]
    train_tokens, val_tokens, tokenizer = load_tokens(run.args.data)
    specs = lm_specs(run.params, tokenizer.vocab_size)
    val = fixed_windows(val_tokens, t["eval_windows"], m["model"]["n_ctx"] + 1)
    schedule = LMSchedule(steps=t["steps"], batch_size=t["batch_size"], lr=t["lr"], warmup=t["warmup"],
                          eval_every=t["eval_every"])
    models, history = {}, {}
    for spec in specs:
        seed_everything(run.seed(spec["seed"], "init"))
        model = build(spec)
        history[spec["name"]] = train_lm(model, train_tokens, val, schedule, t["seed"], run.device, label=spec["name"])
        models[spec["name"]] = model.cpu()
        print(f"{spec['name']}: val loss {history[spec['name']][-1]['val_loss']:.4f}", flush=True)
    meta = run.save(run.args.checkpoint, models, specs, experiment="lm")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} LMs, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
