"""shared.data.stories (the planted negation circuit, the word tokenizer) and the text datasets of shared.data."""
import dataclasses
import hashlib
import json
import os
import socket
from collections import Counter

import numpy as np
import pytest

from shared import data
from shared.data import Dataset, DatasetUnavailable, RemoteFile
from shared.data.stories import (
    BOS,
    EOS,
    NEGATION_PROBABILITY,
    UNK,
    WORD_CLASSES,
    WordTokenizer,
    encode_stories,
    generate_stories,
)

N_STORIES = 5000
CLASS_OF = {word: name for name, words in WORD_CLASSES.items() for word in words}


# ---------------------------------------------------------------- parsing the stories back
def sentences_of(story):
    words = story.split()
    assert words[-1] == ".", story
    sentences, current = [], []
    for word in words:
        current.append(word)
        if word == ".":
            sentences.append(current)
            current = []
    return sentences


def events_of(story):
    """[(polarity word, negation word or None, reaction is positive)] of one story, checking its structure:
    every sentiment sentence is followed by the protagonist's reaction and no other sentence carries a cue."""
    sentences = sentences_of(story)
    protagonist = next(w for w in story.split() if CLASS_OF.get(w) == "names")
    events, pending = [], None
    for sentence in sentences:
        classes = [CLASS_OF.get(w) for w in sentence]
        polarity = [w for w, c in zip(sentence, classes) if c in ("positive", "negative")]
        negations = [w for w, c in zip(sentence, classes) if c == "negation"]
        reactions = [w for w, c in zip(sentence, classes) if c and c.startswith("reaction")]
        if pending is not None:  # the sentence right after a sentiment sentence is its reaction
            assert sentence[:2] == ["so", protagonist] and len(sentence) == 4 and len(reactions) == 1, story
            events.append((*pending, CLASS_OF[reactions[0]] == "reaction_positive"))
            pending = None
        elif polarity:
            assert len(polarity) == 1 and len(negations) <= 1 and not reactions, story  # no double negation
            pending = (polarity[0], negations[0] if negations else None)
        else:
            assert not negations and not reactions and "so" not in sentence, story  # fillers carry no cue
    assert pending is None, story
    return events


@pytest.fixture(scope="module")
def events():
    stories = generate_stories(N_STORIES, seed=123)
    per_story = [events_of(story) for story in stories]
    assert all(2 <= len(e) <= 4 for e in per_story)
    return [event for story_events in per_story for event in story_events]


def positive_rate(events, keep):
    chosen = [reaction for word, negation, reaction in events if keep(word, negation)]
    return np.mean(chosen), len(chosen)


# ---------------------------------------------------------------- generator
def test_same_seed_same_stories_different_seed_different():
    first = generate_stories(300, seed=7)
    assert first == generate_stories(300, seed=7)
    assert first[:5] == generate_stories(5, seed=7)  # a prefix does not depend on how many are asked for
    other = generate_stories(300, seed=8)
    assert sum(a != b for a, b in zip(first, other)) > 290
    assert len(set(first)) > 290  # not one story repeated
    for story in first:
        assert story == story.lower() == " ".join(story.split()) == WordTokenizer.normalize(story)


def test_every_reaction_is_polarity_xor_negation(events):
    assert len(events) > 2 * N_STORIES
    for word, negation, reaction_positive in events:
        assert reaction_positive == ((CLASS_OF[word] == "positive") != (negation is not None)), (word, negation)


def test_polarity_is_balanced_and_independent_of_negation(events):
    p_neg = NEGATION_PROBABILITY
    combos = Counter((CLASS_OF[word], negation is not None) for word, negation, _ in events)
    expected = {(pol, neg): 0.5 * (p_neg if neg else 1 - p_neg) for pol in ("positive", "negative") for neg in (True, False)}
    assert set(combos) == set(expected)
    for combo, count in combos.items():
        assert abs(count / len(events) - expected[combo]) < 0.03, combos
    assert abs(np.mean([CLASS_OF[w] == "positive" for w, _, _ in events]) - 0.5) < 0.03
    assert abs(np.mean([n is not None for _, n, _ in events]) - p_neg) < 0.03
    assert set(n for _, n, _ in events) - {None} == set(WORD_CLASSES["negation"])


def test_reaction_needs_both_negation_and_polarity(events):
    """Polarity alone predicts the reaction only as often as an event is not negated; negation alone not at all.
    Only both together predict it always (the XOR checked above)."""
    p_neg = NEGATION_PROBABILITY
    conditions = {  # condition -> expected rate of a positive reaction
        "positive word": (lambda w, n: CLASS_OF[w] == "positive", 1 - p_neg),
        "negative word": (lambda w, n: CLASS_OF[w] == "negative", p_neg),
        "negated": (lambda w, n: n is not None, 0.5),
        "not negated": (lambda w, n: n is None, 0.5),
    }
    for name, (keep, expected) in conditions.items():
        rate, count = positive_rate(events, keep)
        assert count > 1000 and abs(rate - expected) < 0.03, (name, rate)
    # Nor does any single word say more: a sentiment word (base forms included) says what its polarity says,
    # and a negation word says nothing.
    for word in WORD_CLASSES["positive"] + WORD_CLASSES["negative"]:
        rate, count = positive_rate(events, lambda w, n: w == word)
        expected = 1 - p_neg if CLASS_OF[word] == "positive" else p_neg
        assert count > 150 and abs(rate - expected) < 0.12, (word, rate, count)
    for word in WORD_CLASSES["negation"]:
        rate, count = positive_rate(events, lambda w, n: n == word)
        assert count > 150 and abs(rate - 0.5) < 0.12, (word, rate, count)


# ---------------------------------------------------------------- tokenizer
@pytest.mark.parametrize("text, expected", [
    ("The END.", "the end ."),
    ("Tom wasn't sad, he didn’t cry!", "tom wasn't sad , he didn't cry !"),  # typographic apostrophe too
    ("'Hello' said Zoë to the café", "' hello ' said zoe to the cafe"),
    ("She had 12 cats and 3.5 dogs", "she had 1 2 cats and 3 . 5 dogs"),
    ("dogs' toys (new)", "dogs ' toys ( new )"),
    ("  many\n\nspaces\there ", "many spaces here"),
])
def test_normalize(text, expected):
    assert WordTokenizer.normalize(text) == expected
    assert WordTokenizer.normalize(expected) == expected


def test_tokenizer_round_trip_specials_and_unknown_words():
    texts = ["Lily's dog wasn't happy.", "It cost 42 coins, said Zoë!", "the dog ran"]
    tokenizer = WordTokenizer.fit(texts, vocab_size=100)
    assert tokenizer.vocab[:3] == ("[UNK]", "[BOS]", "[EOS]") and (UNK, BOS, EOS) == (0, 1, 2)
    for text in texts:
        ids = tokenizer.encode(text)
        assert UNK not in ids and tokenizer.decode(ids) == WordTokenizer.normalize(text)
    assert tokenizer.encode("the zebra ran") == [tokenizer.id_of("the"), UNK, tokenizer.id_of("ran")]
    with pytest.raises(KeyError):
        tokenizer.id_of("zebra")
    restored = WordTokenizer.from_json(tokenizer.to_json())
    assert restored.vocab == tokenizer.vocab and restored.encode(texts[1]) == tokenizer.encode(texts[1])
    with pytest.raises(ValueError, match="must start with"):
        WordTokenizer.from_json('{"vocab": ["a", "b", "c"]}')


def test_vocab_is_by_frequency_then_alphabet_and_independent_of_order():
    texts = ["b a c c", "d c", "e b"]  # c: 3; b: 2; a, d, e: 1
    tokenizer = WordTokenizer.fit(texts, vocab_size=6)
    assert tokenizer.vocab[3:] == ("c", "b", "a") and tokenizer.vocab_size == 6
    assert WordTokenizer.fit(texts[::-1], vocab_size=6).vocab == tokenizer.vocab
    assert WordTokenizer.fit(texts, vocab_size=100).vocab[3:] == ("c", "b", "a", "d", "e")


def test_encode_stories_is_one_stream_with_bos_and_eos():
    tokenizer = WordTokenizer.fit(["a b", "c"], vocab_size=10)
    stream = encode_stories(["a b", "c x"], tokenizer)
    a, b, c = (tokenizer.id_of(w) for w in "abc")
    assert stream.dtype == np.int32 and stream.tolist() == [BOS, a, b, EOS, BOS, c, UNK, EOS]


# ---------------------------------------------------------------- prepared datasets
def test_prepare_stories_synthetic(tmp_path):
    first, second = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    data.prepare("stories_synthetic", first)
    data.prepare("stories_synthetic", second)
    assert first.read_bytes() == second.read_bytes()  # metadata order included
    arrays, metadata = data.read_prepared(first)
    assert sorted(arrays) == sorted(data.TEXT_ARRAY_KEYS)
    assert sorted(metadata) == ["dataset", "licence", "n_train_stories", "n_val_stories", "sources", "vocab"]
    assert metadata["n_train_stories"] == "40000" and metadata["n_val_stories"] == "2000"
    tokenizer = WordTokenizer.from_json(metadata["vocab"])
    for key, n_stories in (("train_tokens", 40000), ("val_tokens", 2000)):
        tokens = arrays[key]
        assert tokens.dtype == np.int32 and tokens[0] == BOS and tokens[-1] == EOS
        assert not (tokens == UNK).any() and tokens.max() < tokenizer.vocab_size
        assert (tokens == BOS).sum() == (tokens == EOS).sum() == n_stories
    for words in WORD_CLASSES.values():  # every planted word is in the vocabulary
        assert all(tokenizer.id_of(word) >= len(("[UNK]", "[BOS]", "[EOS]")) for word in words)
    first_val = arrays["val_tokens"][: np.argmax(arrays["val_tokens"] == EOS) + 1]
    assert tokenizer.decode(first_val) == f"[BOS] {generate_stories(1, seed=1)[0]} [EOS]"


TRAIN_TEXT = ("Once upon a time, Lily's cat sat.\n<|endoftext|>\nTom ran fast!\nHe was happy.\n<|endoftext|>\n"
              "Once upon a time, Lily's cat sat.\n<|endoftext|>\n  \n<|endoftext|>\nZoë had 12 cats.<|endoftext|>"
              "The end.\n")
VALID_TEXT = "Tom ran fast!\nHe was happy.\n<|endoftext|>\nA new story.\n<|endoftext|>\nA new story.\n<|endoftext|>\n"


def test_tinystories_loader_deduplicates_and_encodes(tmp_path):
    paths = {"train": tmp_path / "train.txt", "val": tmp_path / "valid.txt"}
    paths["train"].write_text(TRAIN_TEXT, encoding="utf-8")
    paths["val"].write_text(VALID_TEXT, encoding="utf-8")
    loaded = data.load_tinystories(paths)
    # train: the repeated story and the blank one go; val: the story already in train and the repeat go.
    assert (loaded["n_train_stories"], loaded["n_val_stories"]) == (4, 1)
    tokenizer = WordTokenizer.from_json(loaded["vocab"])
    assert tokenizer.decode(loaded["train_tokens"]) == (
        "[BOS] once upon a time , lily's cat sat . [EOS] [BOS] tom ran fast ! he was happy . [EOS] "
        "[BOS] zoe had 1 2 cats . [EOS] [BOS] the end . [EOS]")
    assert loaded["val_tokens"].tolist() == [BOS, tokenizer.id_of("a"), UNK, UNK, tokenizer.id_of("."), EOS]


def fake_tinystories(files, urls_for):
    return Dataset("tinystories_fake", "fake", "CC0", "none",
                   {role: RemoteFile(name, hashlib.sha256(blob).hexdigest(), urls_for(name))
                    for role, (name, blob) in files.items()},
                   loader=data.load_tinystories, kind="text")


@pytest.mark.parametrize("corrupt", [False, True], ids=["good", "corrupt"])
def test_text_dataset_download_and_prepare(server, tmp_path, monkeypatch, corrupt):  # noqa: F811
    www, base_url, _ = server
    files = {"train": ("train.txt", TRAIN_TEXT.encode()), "val": ("valid.txt", VALID_TEXT.encode())}
    for name, blob in files.values():
        (www / name).write_bytes(blob[:-5] + b"oops\n" if corrupt and name == "train.txt" else blob)
    monkeypatch.setitem(data.REGISTRY, "tinystories_fake", fake_tinystories(files, lambda n: (f"{base_url}/{n}",)))
    cache, out = tmp_path / "cache", tmp_path / "out.safetensors"
    if corrupt:
        with pytest.raises(DatasetUnavailable, match="checksum mismatch"):
            data.prepare("tinystories_fake", out, cache)
        assert not out.exists() and os.listdir(cache / "tinystories_fake") == ["valid.txt"]
        return
    data.prepare("tinystories_fake", out, cache)
    arrays, metadata = data.read_prepared(out)
    assert sorted(arrays) == sorted(data.TEXT_ARRAY_KEYS) and metadata["n_train_stories"] == "4"
    assert json.loads(metadata["sources"]) == {
        role: {"path": str(cache / "tinystories_fake" / name), "sha256": hashlib.sha256(blob).hexdigest()}
        for role, (name, blob) in files.items()}


def test_tinystories_unavailable_raises_with_pins(tmp_path, monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"  # closed once the socket is: refused at once
    real = data.REGISTRY["tinystories"]
    offline = {role: dataclasses.replace(remote, urls=(f"{dead}/{remote.filename}",))
               for role, remote in real.files.items()}
    monkeypatch.setitem(data.REGISTRY, "tinystories", dataclasses.replace(real, files=offline))
    out = tmp_path / "tinystories.safetensors"
    with pytest.raises(DatasetUnavailable) as error:
        data.prepare("tinystories", out, tmp_path / "cache")
    message = str(error.value)
    for remote in real.files.values():
        assert len(remote.sha256) == 64 and int(remote.sha256, 16) >= 0
        assert remote.filename in message and remote.sha256 in message
        assert all(url.startswith("https://huggingface.co/datasets/roneneldan/TinyStories/") for url in remote.urls)
    assert message.count("put it by hand") == 2 and not out.exists()
