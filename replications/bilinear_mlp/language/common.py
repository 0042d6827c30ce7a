"""What the language-model scripts share (section 5): token streams, the trained transformers and SAEs, the
evaluation activations, and a per-token annotation of the planted negation circuit used to name features."""
from types import SimpleNamespace

import torch

from shared.data.stories import BOS, WORD_CLASSES
from shared.data.tokens import load_tokens
from shared.nn.sae import TopKSAE
from shared.nn.transformer import Transformer
from shared.pipeline.run import load_models
from shared.train.language_model import document_starts, mlp_activations, windows_at


def build(spec):
    """The untrained module of one run of a language checkpoint: the transformer (kind 'lm') or a TopK SAE ('sae')."""
    if spec["kind"] == "lm":
        return Transformer(spec["vocab_size"], mlp=spec["mlp"], **spec["model"])
    if spec["kind"] == "sae":
        return TopKSAE(spec["d_model"], spec["n_features"], spec["k"])
    raise ValueError(f"unknown model kind {spec['kind']!r}")


def load_one(path, device="cpu"):
    """(module, meta) from a checkpoint holding one model (a transformer or an SAE); frozen, eval mode."""
    models, _, meta = load_models(path, build)
    (module,) = models.values()
    return module.to(device), meta


def load_lm(path, device="cpu"):
    return load_one(path, device)


def load_sae(path, device="cpu"):
    return load_one(path, device)


def load_analysed(args, device):
    """What the circuit analyses read: the bilinear transformer, the input and output SAEs of the analysed layer,
    and the validation stream with its tokenizer (a namespace; *_meta are the checkpoints' metadata)."""
    lm, lm_meta = load_lm(args.lm, device)
    sae_in, _ = load_sae(args.sae_in, device)
    sae_out, sae_meta = load_sae(args.sae_out, device)
    _, val_tokens, tokenizer = load_tokens(args.data)
    return SimpleNamespace(lm=lm, lm_meta=lm_meta, sae_in=sae_in, sae_out=sae_out, sae_meta=sae_meta,
                           val_tokens=val_tokens, tokenizer=tokenizer)


def eval_starts(val_tokens, n_windows, n_ctx):
    """Where the evaluation windows start: at the first n_windows stories' [BOS] tokens."""
    return document_starts(val_tokens, n_windows, n_ctx, BOS)


def eval_positions(values, starts, n_ctx):
    """A per-token array aligned with the validation stream, at the evaluation positions ([BOS] dropped)."""
    return windows_at(values, starts, n_ctx)[:, 1:].flatten()


def eval_activations(model, val_tokens, n_windows, layer):
    """MLP input and output (float64) at `layer` on the evaluation windows, and the tokens there."""
    windows = windows_at(val_tokens, eval_starts(val_tokens, n_windows, model.n_ctx), model.n_ctx)
    x, y, tokens = mlp_activations(model, windows.to(model.unembed.weight.device), layer)
    return x.double(), y.double(), tokens


def annotate_events(words):
    """Per token: (negated, polarity) of the sentiment event it belongs to, as the story generator planted it.

    A sentence that contains a positive or negative word is a sentiment event; its tokens carry what has been seen
    so far in it (a negation word -> negated = 1; the sentiment word -> polarity +1 / -1; a negation before the
    sentiment word is already in the event, with polarity 0 = not yet known), and the next sentence
    (the reaction, "so tom smiled .") carries the completed event. Everything else is (0, 0), outside any event.
    Returns int tensors negated, polarity and a bool tensor in_event, aligned with `words`.
    """
    negations, positive, negative = (set(WORD_CLASSES[k]) for k in ("negation", "positive", "negative"))
    n = len(words)
    negated, polarity, in_event = [0] * n, [0] * n, [False] * n  # lists, not tensors: item writes in a loop this long
    neg, pol, carried = 0, 0, None  # state of the current sentence; carried = the previous sentence's event
    for i, w in enumerate(words):
        if w in ("[BOS]", "[EOS]"):
            neg, pol, carried = 0, 0, None
            continue
        neg = neg or int(w in negations)
        pol = pol or (1 if w in positive else -1 if w in negative else 0)
        if pol or neg:
            negated[i], polarity[i], in_event[i] = neg, pol, True
        elif carried is not None:
            negated[i], polarity[i], in_event[i] = carried[0], carried[1], True
        if w == ".":
            carried = (neg, pol) if pol else None
            neg, pol = 0, 0
    return torch.tensor(negated), torch.tensor(polarity), torch.tensor(in_event)


def reaction_ids(tokenizer):
    """Token ids of the positive and negative reaction words the tokenizer knows: {class: long tensor}."""
    return {c: torch.tensor([tokenizer.id_of(w) for w in WORD_CLASSES[c] if w in tokenizer.vocab])
            for c in ("reaction_positive", "reaction_negative")}


@torch.no_grad()
def reaction_accuracy(model, windows, tokenizer, negated, ablate_mlp=None):
    """How often the model puts more probability on the right reaction class (smiled/cheered/... vs cried/...)
    where the next token is a reaction: (all, negated events only). `ablate_mlp` zeroes that layer's MLP output:
    the causal check of which layer computes the planted circuit. `negated` is aligned with windows[:, 1:]."""
    ids = reaction_ids(tokenizer)
    mlp = model.blocks[ablate_mlp].mlp if ablate_mlp is not None else None
    hook = mlp.register_forward_hook(lambda m, i, out: torch.zeros_like(out)) if mlp is not None else None
    try:
        probs = model(windows[:, :-1]).softmax(-1)
    finally:
        if hook is not None:
            hook.remove()
    nxt = windows[:, 1:]
    is_pos, is_neg = (torch.isin(nxt, ids[c].to(nxt.device)) for c in ("reaction_positive", "reaction_negative"))
    p_pos, p_neg = (probs[..., ids[c].to(nxt.device)].sum(-1) for c in ("reaction_positive", "reaction_negative"))
    right = torch.where(is_pos, p_pos > p_neg, p_neg > p_pos)
    where = is_pos | is_neg
    return right[where].float().mean().item(), right[where & (negated == 1)].float().mean().item()
