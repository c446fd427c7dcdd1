"""Values stated in sentences, not after labels: contracts and letters.

"This Agreement shall be governed by the laws of the State of Delaware", "for a period
of two (2) years", "by and between Acme, Inc., a Delaware corporation, and Globex
LLC": the value stands in a sentence, and the target's own words say which sentence.
The sentence is chosen by the words the target's name and description share with it
(compared by their first letters, so "governed", "governing" and "govern" meet), among
the sentences that hold a value of the target's kind (roles.py reads the kind):

- ``jurisdiction``: the place after "laws of (the State of)": "Delaware", "New York";
- ``duration``: a number of days, weeks, months or years, as printed ("two (2) years");
- ``parties``: the names after "between" in the agreement's opening sentence, each a
  value (a qualifier such as ", a Delaware corporation" or "(the "Company")" dropped);
  without such a sentence, the names in the block under a "Parties:" heading, and in a
  letter agreement the sender's and the addressee's names heading their address
  blocks above the salutation.

Nothing here grounds a value the way a label does, so its confidence stays low (fields.py
keeps every ungrounded value under 0.9).
"""

from __future__ import annotations

import re
from typing import Any

from .lines import Line
from .results import EngineValue
from .titles import letter_head

__all__ = ["DURATION", "JURISDICTION", "PARTIES", "stated_values"]

JURISDICTION = "jurisdiction"
DURATION = "duration"
PARTIES = "parties"

# "laws of the State of New York", "laws of the Commonwealth of Virginia", "laws of
# England and Wales", "Delaware law".
_LAW = re.compile(
    r"\blaws?\s+of\s+(?i:the\s+)?(?i:(?:State|Commonwealth|Province|Republic|Kingdom|Canton)"
    r"\s+of\s+)?((?:[A-Z][a-z]+)(?:\s+(?:[A-Z][a-z]+|of|and))*)"
    # "governed by Indiana law", "under Oregon law"
    r"|\b(?:by|under|with)\s+(?:the\s+)?((?:[A-Z][a-z]+)(?:\s+[A-Z][a-z]+)?)\s+law\b")
_NUMBER_WORD = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
                r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|"
                r"forty|fifty|sixty|ninety|twenty-four|thirty-six|forty-eight)")
_DURATION = re.compile(
    rf"\b(?:{_NUMBER_WORD}\s*\(\s*\d{{1,3}}\s*\)|{_NUMBER_WORD}|\d{{1,3}})"
    r"[\s-]*(?:calendar\s+|full\s+)?(?:days?|weeks?|months?|years?)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.;:])\s+(?=[A-Z\"“])")
_BETWEEN = re.compile(r"\b(?:by\s+and\s+)?between\b", re.IGNORECASE)
# What follows a party's name in an opening sentence: its description or defined name.
_QUALIFIER = re.compile(
    r",?\s+(?:an?\s+[A-Z]?[a-z]+(?:\s+[a-z]+)*\s+(?:corporation|company|limited|partnership|"
    r"bank|association|entity|individual|llc)|with\s+(?:its|offices|a\s+principal)|"
    r"having|whose|residing|located|organized|incorporated|on\s+behalf)\b.*$"
    r"|\s*\(.*$|\s*[\"“].*$",
    re.IGNORECASE | re.DOTALL)
_LEGAL_TAIL = re.compile(r"^(?:inc|llc|l\.l\.c|ltd|corp|co|lp|l\.p|plc|n\.v|s\.a|gmbh|ag)\b\.?",
                         re.IGNORECASE)
_STOP = frozenset({"the", "a", "an", "of", "its", "this", "that", "which", "is", "in", "on",
                   "at", "for", "by", "to", "and", "or", "with", "as", "it", "be", "each",
                   "one", "value", "named", "stated", "how", "long", "number", "what", "who",
                   "whose", "us", "from"})
# What a sentence stating such a value says, whatever the target's own words: a term
# is how long the agreement or its obligations remain in effect or survive, a governing
# law the law the agreement is governed by and construed under.
_KIND_CUES = {
    DURATION: frozenset({"agree", "oblig", "term", "perio", "remai", "effec", "survi",
                         "expir", "termi"}),
    JURISDICTION: frozenset({"gover", "const", "inter", "law"}),
}
# Raw scores before calibration: the share of values each way of reading was right on
# contracts-dev's tuning half, (right + 1) / (n + 2). A calibration fitted on sets
# without contracts knows nothing of sentences, and maps these as it maps any raw score:
# "governed by the laws of ..." names one law (17 of 17), an opening sentence's
# "between X and Y" the parties (9 of 9), a letter's address blocks less surely (9 of
# 11), while a contract states several durations (3 of 6).
_STATED = {JURISDICTION: 0.95, DURATION: 0.5}
_PARTY = 0.9  # a name after "between" in an opening sentence
_LETTER_PARTY = 0.75  # a name heading an address block of a letter agreement
_MAX_PARTIES = 6


def stated_values(lines: list[Line], target: dict[str, Any], kind: str) -> list[EngineValue]:
    """The target's values read from the sentence its words point to; [] when none holds
    a value of its kind."""
    sentences = _sentences(lines)
    if not sentences:
        return []
    cues = _stems(f"{target.get('name') or ''} {target.get('description') or ''}")
    cues |= _KIND_CUES.get(kind, frozenset())
    if kind == PARTIES:
        return (_parties(sentences) or _listed_parties(lines, sentences)
                or _letter_parties(lines) or _introduced_parties(lines, _defined(sentences)))
    pattern = _LAW if kind == JURISDICTION else _DURATION
    named = _stems(target.get("name") or "")
    best: tuple[bool, int, str] | None = None
    for index, sentence in enumerate(sentences):
        found = pattern.search(sentence)
        if not found:
            continue
        shared = len(cues & _stems(sentence))
        headed = _headed(sentences, index, named)
        value = (found.group(1) or found.group(2)) if kind == JURISDICTION else found.group(0)
        if best is None or (headed, shared) > best[:2]:
            best = (headed, shared, value.strip())
    if best is None or (best[1] == 0 and not best[0] and kind == DURATION):
        return []  # a duration in a sentence the target's words do not touch says nothing
    headed, shared, value = best
    if headed:
        shared = max(shared, min(len(cues), 4))  # the section's heading names the target
    share = min(1.0, shared / max(1, min(len(cues), 4)))
    return [EngineValue(_trimmed(value), round(_STATED[kind] * (0.5 + 0.5 * share), 4),
                        evidence={"sentence": 1.0, "sentence_cues": round(share, 3)})]


# A section's number before its heading: "13.", "6.15", "(b)", "Section 4.".
_SECTION_NUMBER = re.compile(
    r"^(?:section\s+)?(?:\(?\d{1,3}(?:\.\d{1,3})*[.)]?|\([a-z]{1,4}\)|[ivx]{1,4}[.)])\s*",
    re.IGNORECASE)
_HEADING_WORDS = 4
# How many sentences of a section its heading reaches ("13. Term. Except for Sections 6
# (...) and 14(i) (Governing Law; Forum), which ...; this Agreement shall expire ...").
_SECTION_SENTENCES = 3


def _headed(sentences: list[str], index: int, named: set[str]) -> bool:
    """Whether the sentence stands in a section whose heading names the target ("13.
    Term." over "This Agreement shall expire ... two years after ...", "Governing Law."):
    within the sentences before it, the nearest heading of a few words (after its
    section number) shares a word with the target's name."""
    if not named:
        return False
    for back in range(1, _SECTION_SENTENCES + 1):
        if index - back < 0:
            return False
        # "... an original. 6.15 Term.": a numbered heading after the last sentence's
        # end, which a section number (no capital) does not split off.
        last = re.split(r"(?<=[.;:])\s+(?=\(?\d)", sentences[index - back])[-1]
        heading = _SECTION_NUMBER.sub("", last).strip()
        if heading and len(heading.split()) <= _HEADING_WORDS:
            return bool(named & _stems(heading))
    return False


def _sentences(lines: list[Line]) -> list[str]:
    """The text of the lines as sentences (lines of one paragraph joined)."""
    text = " ".join(line.text for line in lines)
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _stems(text: str) -> set[str]:
    """Content words by their first five letters, plural "s" dropped: "governed",
    "governing" -> "gover"; "laws" -> "law"."""
    words = re.findall(r"[a-z]+", text.lower())
    return {w.rstrip("s")[:5] for w in words if w not in _STOP and len(w) > 2}


def _trimmed(value: str) -> str:
    """A jurisdiction without the words after the place ("New York without regard")."""
    return re.sub(r"\s+(?:and|of)$", "", value)


# A defined name: (the "Company"), ("Recipient"), (the “Employee”).
_DEFINED = re.compile(r"\(\s*(?:the\s+)?[\"“”']\s*([^\"“”']{2,40}?)\s*[\"“”']", re.IGNORECASE)


def _parties(sentences: list[str]) -> list[EngineValue]:
    """The names after "between" in the first sentence that has one (an opening); a
    defined name of the document ("the Company", "Buyer") is no party's name."""
    defined = _defined(sentences)
    for sentence in sentences[:40]:
        found = _BETWEEN.search(sentence)
        if not found:
            continue
        names = _names(sentence[found.end():], defined)
        if names:
            return [EngineValue(n, _PARTY, evidence={"sentence": 1.0, "parties": 1.0})
                    for n in names[:_MAX_PARTIES]]
    return []


def _defined(sentences: list[str]) -> set[str]:
    return {d.lower() for sentence in sentences for d in _DEFINED.findall(sentence)}


def _names(rest: str, defined: set[str]) -> list[str]:
    """The names of "X, a Delaware corporation, and Y LLC (the "Company")": each with
    its qualifier dropped, lower-case phrases ("its parent, divisions") left out."""
    names = []
    for piece in re.split(r"\s+and\s+|;", rest):
        name = _QUALIFIER.sub("", piece).strip(" ,:\"“”")
        last = name.split()[-1] if name.split() else ""
        if name.endswith(".") and not _LEGAL_TAIL.match(last.split(",")[-1]):
            name = name[:-1]  # the sentence's full stop, not "Inc."
        # "Acme, Inc." is one name: a legal form after the comma belongs to it.
        parts = [p.strip() for p in name.split(",")]
        joined = parts[0]
        for part in parts[1:]:
            if not _LEGAL_TAIL.match(part):
                break
            joined = f"{joined}, {part}"
        bare = re.sub(r"^the\s+", "", joined, flags=re.IGNORECASE).lower()
        if (joined and (joined[0].isupper() or joined[0].isdigit())
                and len(joined.split()) <= 8 and bare not in defined):
            names.append(joined)
    return names


# "PARTIES:" heading the parties' names, one block of lines joined by "and".
_PARTIES_HEADING = re.compile(r"^\s*(?:the\s+)?parties\s*:?\s*$", re.IGNORECASE)
# The next heading ends the block: "RECITALS:", "WHEREAS:", "1. Definitions:".
_NEXT_HEADING = re.compile(r"^\s*(?:\S+\s+){0,2}\S+:\s*$")
_LISTED_LINES = 8


def _listed_parties(lines: list[Line], sentences: list[str]) -> list[EngineValue]:
    """The names in the block under a "Parties:" heading ("Charles D. Denson (EMPLOYEE)
    / and / NIKE, Inc., and its parent ... (NIKE):")."""
    for index, line in enumerate(lines):
        if not _PARTIES_HEADING.match(line.text):
            continue
        block = []
        for following in lines[index + 1: index + 1 + _LISTED_LINES]:
            if _NEXT_HEADING.match(following.text):
                break
            block.append(following.text)
        names = _names(" ".join(block), _defined(sentences))
        if names:
            return [EngineValue(n, _PARTY, evidence={"listed": 1.0, "parties": 1.0})
                    for n in names[:_MAX_PARTIES]]
    return []


# A parenthetical naming what the words before it are called: (the "Company"),
# ("Employee"), (referred to as "you"), (acting for the Company, "Raymond James").
_NAMING = re.compile(r"\((?:[^()]{0,120}?[\"“][^\"“”]{1,40}[\"”][^()]{0,60})\)")
# Words inside a name that are not capitalised: "The Regents of the University".
_NAME_LINKS = frozenset({"of", "the", "&", "de", "du", "des", "la", "von", "van", "der"})
# The opening a party is introduced in, in characters of the document's text: a
# sentence split would cut "Mark A. Sirgo" at its initial.
_OPENING = 2000
# As sure as a letter's address blocks: no "between" says these are all the parties.
_INTRODUCED_PARTY = 0.75
# A party's description after its name and a comma: ", a Delaware corporation", ", with
# offices located at 1A 3033 King George Hwy, Surrey, BC".
_DESCRIBED = re.compile(r",\s+(?:an?|with|having|whose|residing|located|organized|"
                        r"incorporated)\s", re.IGNORECASE)
_DESCRIPTION_CHARS = 200


def _introduced_parties(lines: list[Line], defined: set[str]) -> list[EngineValue]:
    """The names an opening introduces with the name they go by: "by Mark A. Sirgo
    ("Employee") in favor of BioDelivery Sciences International, Inc., a Delaware
    corporation (the "Company")". A defined name of a thing ("a possible transaction
    (the "Transaction")") has no proper name before it, and a defined name itself
    ("between Employee and the Company") is no party's: both are passed over."""
    opening = " ".join(line.text for line in lines)[:_OPENING]
    names: list[str] = []
    for naming in _NAMING.finditer(opening):
        name = _name_before(opening[: naming.start()])
        if name and name.lower() not in {n.lower() for n in names} and not (
                {w.lower() for w in name.split()} - _NAME_LINKS) <= defined:
            names.append(name)
    return [EngineValue(n, _INTRODUCED_PARTY, evidence={"sentence": 1.0, "parties": 1.0})
            for n in names[:_MAX_PARTIES]]


def _name_before(text: str) -> str:
    """The proper name that ends the text, its description after a comma left out
    ("Acme, Inc., a Delaware corporation" -> "Acme, Inc."); "" when the text ends in a
    quotation, a lower-case word or a name of one plain word."""
    described = list(_DESCRIBED.finditer(text, max(0, len(text) - _DESCRIPTION_CHARS)))
    text = (text[: described[-1].start()] if described else text).rstrip(" ,")
    if not text or text[-1] in "\"“”'’":
        return ""
    words = text.split()
    taken: list[str] = []
    for word in reversed(words):
        bare = word.strip(",")
        if _NOT_A_NAME.search(bare):
            break  # "AGREEMENT The Regents of ...": the title before the name
        if word.endswith(",") and taken and not _LEGAL_TAIL.match(taken[-1]):
            break  # "Company's agent, Raymond James": the comma ends the name
        if bare[:1].isupper() or bare[:1].isdigit() or (taken and bare.lower() in _NAME_LINKS):
            taken.append(word)
        else:
            break
        if len(taken) == 8:
            break
    while taken and taken[-1].strip(",").lower() in _NAME_LINKS:
        taken.pop()  # a name opens with a capital, not with "of"
    name = " ".join(reversed(taken)).strip(" ,")
    legal = any(_LEGAL_TAIL.match(w.strip(",")) for w in taken)
    if not name or (len(taken) < 2 and not legal) or _NOT_A_NAME.search(name):
        return ""
    return name


# The first line of an address: "301 South College Street", "c/o Barclays Capital",
# "P.O. Box 12".
_STREET = re.compile(r"^\s*(?:\d+[\d-]*\s+[A-Z0-9]|c/o\b|p\.?\s?o\.?\s+box\b)",
                     re.IGNORECASE)
_NOT_A_NAME = re.compile(r"\b(?:agreement|exhibit|confidential|logo|attention|attn|re)\b|"
                         r"\d{4}|:", re.IGNORECASE)


def _letter_parties(lines: list[Line]) -> list[EngineValue]:
    """The names heading the address blocks of a letter agreement's head (its sender's
    letterhead and its addressee), above the salutation; [] for a document that is no
    letter."""
    head = letter_head(lines)
    names: list[str] = []
    for line, following in zip(head, head[1:], strict=False):
        name = line.text.strip()
        if (_STREET.match(following.text) and not _STREET.match(name) and name[:1].isupper()
                and len(name.split()) <= 8 and not _NOT_A_NAME.search(name)
                and sum(c.isalpha() for c in name) >= len(name.replace(" ", "")) / 2):
            names.append(name)
    return [EngineValue(n, _LETTER_PARTY, evidence={"letter": 1.0, "parties": 1.0})
            for n in dict.fromkeys(names)][:_MAX_PARTIES]
