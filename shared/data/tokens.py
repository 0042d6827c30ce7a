"""A prepared text file (shared.data.read_prepared) as the token tensors a language model reads, with its tokenizer.
Its own module so that `import shared.data` (the prepare rules) does not import torch."""
import torch

from shared.data.prepare import read_prepared
from shared.data.stories import WordTokenizer


def load_tokens(path):
    """(train stream, validation stream, tokenizer) of a prepared text dataset: int64 token ids and the
    WordTokenizer its vocabulary was encoded with."""
    arrays, meta = read_prepared(path, keys=("train_tokens", "val_tokens"))
    as_long = lambda a: torch.from_numpy(a).long()
    return as_long(arrays["train_tokens"]), as_long(arrays["val_tokens"]), WordTokenizer.from_json(meta["vocab"])
