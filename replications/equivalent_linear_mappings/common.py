"""What this paper's quick-tier scripts share: the token streams of the stories and the prompts cut from them."""
import torch

from shared.data import read_prepared
from shared.data.stories import BOS, WordTokenizer
from shared.train.language_model import document_starts, windows_at


def load_tokens(path):
    """(train stream, validation stream, tokenizer) of the prepared stories."""
    arrays, meta = read_prepared(path)
    as_long = lambda a: torch.from_numpy(a).long()
    return as_long(arrays["train_tokens"]), as_long(arrays["val_tokens"]), WordTokenizer.from_json(meta["vocab"])


def prompts(val_tokens, n, length, offset):
    """n validation prompts of `length` tokens, each starting `offset` tokens into a different story (past the
    [BOS] and the intro, so that the prediction depends on the story so far)."""
    starts = document_starts(val_tokens, n, length + offset, BOS) + offset
    return windows_at(val_tokens, starts, length)
