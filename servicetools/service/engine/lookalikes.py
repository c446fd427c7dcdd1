"""How alike two words are as OCR readings: characters the recogniser confuses count as near.

Kept apart from ocr.py on purpose: the benchmarks cache OCR'd words by a digest of the
reading code, and matching what was read is not reading.
"""

from __future__ import annotations

__all__ = ["digits_read_as_letters", "lookalike_ratio"]

# Characters the recogniser mistakes for one another ("lotal", "1olal" for "Total";
# "B" read as "8" or "3", "Tatal" for "Total"): within a group a substitution costs a
# quarter of one.
_LOOKALIKES = ("l1it", "o0a", "s5", "b83", "g9", "z2")
_GROUP = {c: n for n, group in enumerate(_LOOKALIKES) for c in group}
_LOOKALIKE_COST = 0.5  # of the 2 an unrelated substitution costs (a deletion + an insertion)


def lookalike_ratio(a: str, b: str) -> float:
    """Like rapidfuzz's fuzz.ratio (1 - edits / total length, 0..1) where swapping two
    look-alike characters costs little: how alike two words are as an OCR reading."""
    previous = [float(j) for j in range(len(b) + 1)]
    for i, ca in enumerate(a, 1):
        row = [float(i)]
        for j, cb in enumerate(b, 1):
            if ca == cb:
                swap = 0.0
            elif ca in _GROUP and _GROUP[ca] == _GROUP.get(cb):
                swap = _LOOKALIKE_COST
            else:
                swap = 2.0
            row.append(min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + swap))
        previous = row
    total = len(a) + len(b)
    return 1.0 - previous[-1] / total if total else 1.0


# Letters the recogniser reads for digits inside a number ("o2/26/20" for "02/26/20").
_AS_DIGITS = str.maketrans({"o": "0", "O": "0", "l": "1", "I": "1", "|": "1"})


def digits_read_as_letters(word: str) -> str:
    """A word of digits with a letter or two the recogniser took for digits, put back
    ("o2/26/20-" -> "02/26/20-"); any other word as it is. At most two letters, and
    digits at least twice as many as them, so "Oct" or "Io" stay words."""
    letters = sum(c in "oOlI|" for c in word)
    if not letters or letters > 2 or sum(c.isdigit() for c in word) < 2 * letters:
        return word
    if any(c.isalpha() and c not in "oOlI" for c in word):
        return word  # "2nd", "Rev1": a word with other letters is no misread number
    return word.translate(_AS_DIGITS)
