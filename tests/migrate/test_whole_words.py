"""``whole_words.holds_word``: the answer of the lookbehind pattern it replaces, on texts made
to put occurrences side by side, at either end, and next to bytes of every kind."""

from __future__ import annotations

import random
import re

import pytest

from migrate.whole_words import holds_word


def reference(source: bytes, word: bytes) -> bool:
    return re.search(rb"(?<![A-Za-z0-9_])" + re.escape(word) + rb"(?![A-Za-z0-9_])", source) is not None


@pytest.mark.parametrize(
    "source, word, expected",
    [
        (b"from apex import amp\n", b"amp", True),
        (b"for example in samples:\n", b"amp", False),
        (b"amp", b"amp", True),
        (b"xamp amp_ ampx _amp", b"amp", False),
        (b"xamp amp_ ampx _amp (amp)", b"amp", True),
        (b"timestamp = 1\namp.initialize(m)\n", b"amp", True),
        (b"aaa", b"aa", False),  # occurrences overlapping each other
        (b"aaa aa", b"aa", True),
        (b"\xc3\xa9amp\xc3\xa9", b"amp", True),  # a non-ASCII byte does not continue a word
        (b"a.b", b"a.b", True),  # not an identifier: the whole pattern decides
        (b"xa.b", b"a.b", False),
        (b"", b"amp", False),
    ],
)
def test_the_answer_of_the_lookbehind_pattern(source, word, expected):
    assert holds_word(source, word) is expected
    assert reference(source, word) is expected


def test_random_texts_agree_with_the_lookbehind_pattern():
    rng = random.Random(7)
    pieces = [b"amp", b"am", b"a", b"p", b"_", b"x", b"1", b" ", b".", b"\n", b"\xc3", b"(", b"ampamp"]
    for word in (b"amp", b"a", b"aa", b"ampamp", b"_amp", b"a.p"):
        for _ in range(2000):
            source = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
            assert holds_word(source, word) == reference(source, word), (source, word)
