"""What this paper's scripts share: the token streams, the BOS id, cross-entropy on fixed windows, and the planted
reaction task of the stories (the HellaSwag analogue)."""
import torch

from shared.data.stories import BOS, WORD_CLASSES
from shared.data.tokens import load_tokens
from shared.train.language_model import evaluate_lm, fixed_windows

ARMS = ("control", "gradual", "all_at_once")  # fine-tuning arms; "pretrained" is the model they start from


def load_text(path):
    """(train stream, validation stream, tokenizer)."""
    return load_tokens(path)


def spec_of(model_cfg, vocab_size, seed, arm):
    return {"name": f"{arm}-seed{seed}", "arm": arm, "seed": seed, "vocab_size": vocab_size, "bos": BOS,
            **model_cfg}


def val_windows(val_tokens, n, n_ctx):
    return fixed_windows(val_tokens, n, n_ctx)


def cross_entropy(model, windows, device):
    return evaluate_lm(model, windows.to(device), batch_size=32)


def reaction_ids(tokenizer):
    """Token ids of the positive and the negative reaction words ("so <name> smiled / cried ...")."""
    return ([tokenizer.id_of(w) for w in WORD_CLASSES["reaction_positive"]],
            [tokenizer.id_of(w) for w in WORD_CLASSES["reaction_negative"]])


@torch.no_grad()
def reaction_accuracy(model, windows, tokenizer, device, batch_size=32):
    """At every position whose next token is a reaction word: is the model's probability mass on the reactions of
    the right sentiment larger than on the others? The reaction's sentiment is polarity XOR negation of the event
    before it, so a model must read both (stories.py). Returns (accuracy, number of scored positions)."""
    pos, neg = reaction_ids(tokenizer)
    was = model.training
    model.eval()
    right, total = 0, 0
    for i in range(0, len(windows), batch_size):
        w = windows[i : i + batch_size].to(device)
        logp = model(model.inputs(w)).log_softmax(-1)
        is_pos = torch.isin(w, torch.tensor(pos, device=device))
        is_neg = torch.isin(w, torch.tensor(neg, device=device))
        scored = is_pos | is_neg
        says_pos = logp[..., pos].logsumexp(-1) > logp[..., neg].logsumexp(-1)
        right += int((says_pos == is_pos)[scored].sum())
        total += int(scored.sum())
    model.train(was)
    return right / max(total, 1), total
