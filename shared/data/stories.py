"""Seeded TinyStories-like stories that plant a negation circuit, and a word-level tokenizer.

Each story has 2-4 sentiment events: a sentence of polarity p (positive or negative word) that is negated or
not (n), then "so <protagonist> <reaction> ." whose sentiment is p XOR n. Polarity and negation are drawn
independently with probability 1/2, so the reaction is predictable only from both together: a model has to
compute the interaction between a negation and a sentiment word, which is what section 5 of Pearce et al.
(2025) reads off bilinear-MLP weights.

All text is lowercase with every word and punctuation mark separated by one space, so `text.split()` gives
the words, and `WordTokenizer.normalize` leaves it unchanged.
"""
import array
import json
import random
import re
import unicodedata
from collections import Counter

import numpy as np

NAMES = ("lily", "ben", "tom", "mia", "sam", "anna", "max", "sue", "tim", "lucy", "jack", "zoe")
OBJECTS = ("cake", "toy", "dog", "book", "song", "game", "hat", "kite", "soup", "movie", "ball", "cat")
PLACES = ("park", "garden", "beach", "zoo")
TOPICS = OBJECTS + PLACES  # what a sentiment event is about

POSITIVE_ADJECTIVES = ("good", "nice", "great", "fun", "pretty", "tasty", "lovely", "kind")
NEGATIVE_ADJECTIVES = ("bad", "ugly", "boring", "mean", "awful", "scary", "dirty", "rude")
# (past tense, base form): the base form follows "did" or "didn't".
POSITIVE_VERBS = (("liked", "like"), ("loved", "love"), ("enjoyed", "enjoy"))
NEGATIVE_VERBS = (("hated", "hate"), ("disliked", "dislike"), ("feared", "fear"))
POSITIVE_REACTIONS = ("smiled", "laughed", "cheered", "clapped")
NEGATIVE_REACTIONS = ("cried", "frowned", "sighed", "pouted")

WORD_CLASSES = {
    "negation": ("not", "never", "wasn't", "didn't"),
    "positive": POSITIVE_ADJECTIVES + tuple(w for pair in POSITIVE_VERBS for w in pair),
    "negative": NEGATIVE_ADJECTIVES + tuple(w for pair in NEGATIVE_VERBS for w in pair),
    "reaction_positive": POSITIVE_REACTIONS,
    "reaction_negative": NEGATIVE_REACTIONS,
    "names": NAMES,
    "topics": TOPICS,
}

# The protagonist is the first name in every intro, so a reader of the text can tell who reacts.
INTROS = (
    "once upon a time , there was a kid named {name} .",
    "there was a little kid named {name} .",
    "{name} was {digit} years old .",
    "one morning , {name} woke up early .",
)
# Neutral sentences: no sentiment, reaction or negation word, so they carry no cue about any reaction.
FILLERS = (
    "one day {name} went to the {place} .",
    "{name} saw a {object} .",
    "{name} had a friend named {name2} .",
    "the sun was warm .",
    "it was a sunny day .",
    "{name} and {name2} walked to the {place} .",
    "{name} found a {object} near the {place} .",
    "there were {number} birds in the sky .",
    "{name} looked at the {object} .",
    "after lunch , {name} sat down .",
    "then {name} went home .",
)
ENDING = "the end ."
# Negation is rarer than affirmation, as in natural text. With it at 1/2 every word is marginally uninformative
# about the reaction (a pure XOR), and a 2-layer model stayed at chance on the reaction for 3,000 steps; at 0.3
# the sentiment word alone predicts 70% of reactions and negation must be read to get the rest.
NEGATION_PROBABILITY = 0.3
ENDING_PROBABILITY = 0.5


def sentiment_event(rng, name):
    """(sentence, reaction sentence, positive, negated) for one event of protagonist `name`."""
    positive, negated = rng.random() < 0.5, rng.random() < NEGATION_PROBABILITY
    topic = rng.choice(TOPICS)
    if rng.random() < 0.5:
        adjective = rng.choice(POSITIVE_ADJECTIVES if positive else NEGATIVE_ADJECTIVES)
        copula = rng.choice(("was not", "was never", "wasn't")) if negated else "was"
        sentence = f"the {topic} {copula} {adjective} ."
    else:
        past, base = rng.choice(POSITIVE_VERBS if positive else NEGATIVE_VERBS)
        # "did like" pairs with "didn't like" so a base form is no tell of negation on its own.
        verb = rng.choice((f"didn't {base}", f"never {past}") if negated else (past, f"did {base}"))
        sentence = f"{name} {verb} the {topic} ."
    reaction = rng.choice(POSITIVE_REACTIONS if positive != negated else NEGATIVE_REACTIONS)
    return sentence, f"so {name} {reaction} .", positive, negated


def filler(rng, name):
    name2 = rng.choice([n for n in NAMES if n != name])
    return rng.choice(FILLERS).format(name=name, name2=name2, place=rng.choice(PLACES),
                                      object=rng.choice(OBJECTS), number=spaced_digits(rng.randint(2, 20)))


def spaced_digits(number):
    return " ".join(str(number))  # "1 2", as the tokenizer splits it, so normalizing leaves a story unchanged


def generate_story(rng):
    name = rng.choice(NAMES)
    blocks = [[rng.choice(INTROS).format(name=name, digit=rng.randint(3, 9))]]
    events = [list(sentiment_event(rng, name)[:2]) for _ in range(rng.randint(2, 4))]
    for _ in range(rng.randint(0, 2)):  # fillers go between whole events, never between one and its reaction
        events.insert(rng.randint(0, len(events)), [filler(rng, name)])
    blocks += events
    if rng.random() < ENDING_PROBABILITY:
        blocks.append([ENDING])
    return " ".join(sentence for block in blocks for sentence in block)


def generate_stories(n_stories, seed):
    """`n_stories` stories from `random.Random(seed)` alone: the same seed gives the same stories anywhere."""
    rng = random.Random(seed)
    return [generate_story(rng) for _ in range(n_stories)]


# ---------------------------------------------------------------- tokenizer
SPECIALS = ("[UNK]", "[BOS]", "[EOS]")
UNK, BOS, EOS = range(len(SPECIALS))  # EOS also pads
# A word is letters with apostrophes only inside ("wasn't"); each digit and each other symbol stands alone.
WORD_PATTERN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*|\d|[^\w\s]|_")


def words_of(text):
    text = text.lower().replace("\u2019", "'")  # a typographic apostrophe is still an apostrophe
    if not text.isascii():
        text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return WORD_PATTERN.findall(text)


class WordTokenizer:
    """Word-level: lowercase, accents stripped, punctuation and single digits as words; ids 0-2 are SPECIALS."""

    def __init__(self, words):
        self.vocab = SPECIALS + tuple(words)
        self.ids = {word: i for i, word in enumerate(self.vocab)}
        if len(self.ids) != len(self.vocab):
            raise ValueError("duplicate words in the vocabulary")

    @staticmethod
    def normalize(text):
        return " ".join(words_of(text))

    @classmethod
    def fit(cls, texts, vocab_size):
        """The `vocab_size - 3` most frequent words of `texts` (ties alphabetical), or all of them if fewer."""
        counts = Counter()
        for text in texts:
            counts.update(words_of(text))
        ranked = sorted(counts, key=lambda word: (-counts[word], word))
        return cls(ranked[: vocab_size - len(SPECIALS)])

    @property
    def vocab_size(self):
        return len(self.vocab)

    def id_of(self, word):
        """The id of one (normalized) word; KeyError if it is not in the vocabulary, rather than a silent UNK."""
        return self.ids[word]

    def encode(self, text):
        return [self.ids.get(word, UNK) for word in words_of(text)]

    def decode(self, ids):
        return " ".join(self.vocab[i] for i in ids)

    def to_json(self):
        return json.dumps({"vocab": list(self.vocab)})

    @classmethod
    def from_json(cls, text):
        vocab = tuple(json.loads(text)["vocab"])
        if vocab[: len(SPECIALS)] != SPECIALS:
            raise ValueError(f"vocabulary must start with {SPECIALS}, got {vocab[:len(SPECIALS)]}")
        return cls(vocab[len(SPECIALS):])


def encode_stories(stories, tokenizer):
    """One int32 stream: [BOS] + words + [EOS] per story."""
    stream = array.array("i")  # 4 bytes a token, not a Python list's 8: TinyStories is ~500M tokens
    for story in stories:
        stream.append(BOS)
        stream.extend(tokenizer.encode(story))
        stream.append(EOS)
    return np.frombuffer(stream, dtype=np.int32).copy()
