"""What a reply says of each option on the question's own attribute (clean, natural, faithful): one-word descriptions
("Clip A: noisy\nClip B: clean"), comparisons in the question's words ("A is less natural than B", "the cleaner one
is B") and, between two options, in their opposite ("A is noisier than B", "B has more background noise", "Audio 2
is less natural": the other one). Read by :mod:`~.scored_options` beside the scores; a denied clause ("I wouldn't
say...", "whether", "the probability that ...") decides nothing.
"""

from __future__ import annotations

import re


def option_named(name: str, options: list[str]) -> str | None:
    """The option ``name`` names: an option itself (any case), or for a slot pair a bare 1 or 2."""
    by_lower = {o.lower(): o for o in options}
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    return {"1": "A", "2": "B"}.get(name) if sorted(options) == ["A", "B"] else None


def _first_option(m: re.Match) -> int:
    """The group of the first option a pattern names: its first unnamed group (named ones hold words)."""
    return next(g for g in range(1, m.re.groups + 1) if g not in m.re.groupindex.values())


def denied(text: str, start: int) -> bool:
    """The clause before ``start`` denies what follows ("I wouldn't say B is more natural than A")."""
    left = max(text.rfind(c, 0, start) for c in ".!?;\n") + 1
    return bool(re.search(r"(?i:\b(?:not|never|no|hardly|nor|whether)\b|n't|\b(?:probability|chance|likelihood|"
                          r"odds)\s+(?:that|of)\b)", text[left:start]))


def overlapping(pattern: str, text: str):
    """Matches of a two-option pattern, the next one from the second option on ("A > B > C": A > B, then B > C)."""
    compiled, pos = re.compile(pattern), 0
    while (m := compiled.search(text, pos)) is not None:
        yield m
        last = compiled.groups  # the second option's group is the pattern's last
        pos = m.start(last) if last >= 2 and m.group(last) else m.end()


# words that describe an option well or badly on one of the questions' attributes: (attribute, +1 / -1)
DESCRIBED = {"clean": ("clean", 1), "quiet": ("clean", 1), "noisy": ("clean", -1), "hissy": ("clean", -1),
              "natural": ("natural", 1), "human": ("natural", 1), "realistic": ("natural", 1),
              "unnatural": ("natural", -1), "synthetic": ("natural", -1), "robotic": ("natural", -1),
              "artificial": ("natural", -1), "faithful": ("faithful", 1), "accurate": ("faithful", 1),
              "unfaithful": ("faithful", -1), "inaccurate": ("faithful", -1)}
ATTRIBUTE_WORDS = {"clean": {"clean", "cleaner", "cleanest", "noise", "noisy", "quiet", "quieter"},
                    "natural": {"natural", "naturally", "human", "realistic"}, "faithful": {"faithful", "accurate"}}
DESCRIPTION = (r"(?:\s*[:\-\u2013]\s*|\s+(?=(?:sounds|is|seems)\s))"
               r"(?:(?:sounds|is|seems|very|quite|fairly|mostly|rather|pretty|slightly|totally|"
               r"completely)\s+)*(?P<word>" + "|".join(DESCRIBED) + r")\b")


def described(text: str, ref: str, options: list[str]) -> tuple[str, str, str] | None:
    """``(better, worse, attribute)`` where each option of a pair is described in one word of one attribute, with
    opposite signs ("Clip A: noisy (hum)\nClip B: clean"); None otherwise."""
    if len(options) != 2:
        return None
    signs: dict[str, set[tuple[str, int]]] = {}
    for m in re.finditer(ref + DESCRIPTION, text, re.I):
        option = option_named(m.group(1), options)
        if option is not None:
            signs.setdefault(option, set()).add(DESCRIBED[m.group("word").lower()])
    if len(signs) != 2 or any(len(v) != 1 for v in signs.values()):
        return None
    (a, (attr_a, sign_a)), (b, (attr_b, sign_b)) = ((o, next(iter(v))) for o, v in signs.items())
    if attr_a != attr_b or sign_a == sign_b:
        return None
    return (a, b, attr_a) if sign_a > 0 else (b, a, attr_a)


COMPARATIVES = {"cleaner": ("clean", 1), "quieter": ("clean", 1), "noisier": ("clean", -1), "hissier": ("clean", -1)}
DEGREE = r"(?:(?:much|far|a\s+bit|slightly|way|noticeably|clearly|a\s+lot)\s+)?"


def on_attribute(text: str, ref: str, options: list[str], asked: set[str]) -> tuple[set[str], list[tuple]]:
    """Winners of comparisons on the question's attribute ("A is less natural than B" on "which sounds more
    natural?": B; "the cleaner one is clip B"), and their spans. Between two options a comparison in the attribute's
    opposite decides too ("A is noisier than B", "B has more background noise than A", "Audio 2 sounds more
    synthetic": the other one), and so does one option compared alone ("Audio 2 is less natural."): with two options
    the other is the answer (:func:`_alone`). A denied clause decides nothing."""
    winners: set[str] = set()
    spans: list[tuple[int, int]] = []
    attributes = {v[0] for w, v in {**DESCRIBED, **COMPARATIVES}.items() if w in asked and v[1] > 0}
    words = {w: v for w, v in {**DESCRIBED, **COMPARATIVES}.items()
             if v[0] in attributes and (v[1] > 0 or len(options) == 2)}
    if not words:
        return winners, spans
    pair = (rf"{ref}'?s?\s+(?:\w+\s+)?(?:is|sounds|seems|are)\s+{DEGREE}(?:(?P<dir>more|less)\s+)?(?P<word>\w+)"
            rf"(?:-sounding)?\s+than\s+{ref}")
    has = rf"{ref}\s+has\s+{DEGREE}(?P<dir>more|less)\s+(?P<word>{_FAULT_NOUN})\s+than\s+{ref}"
    found = [(m, _sign(words, m.group("word"), m.group("dir"))) for m in overlapping(pair, text)]
    if "clean" in attributes and len(options) == 2:
        found += [(m, -1 if m.group("dir").lower() == "more" else 1) for m in overlapping(has, text)]
    if "clean" in attributes and len(options) == 2:  # "more background noise in A than in B"
        noise_in = rf"(?i:more|less)\s+{_FAULT_NOUN}\s+(?i:in|on)\s+{ref}\s+than\s+(?:(?i:in|on)\s+)?{ref}"
        found += [(m, -1 if m.group(0).lower().startswith("more") else 1) for m in overlapping(noise_in, text)]
    for m, sign in found:
        if sign and not denied(text, m.start()):
            a, b = option_named(m.group(_first_option(m)), options), option_named(m.group(m.re.groups), options)
            if a is not None and b is not None and a != b:
                winners.add(a if sign > 0 else b)
                spans.append(m.span())
    one = (rf"\bthe\s+(?:(?:more|most)\s+)?(?P<word>\w+)(?:-sounding)?\s+(?:one|clip|option|description|recording|"
           r"audio|sample|response|of\s+the\s+two)\s+(?:is|would\s+be)"
           rf"\s+{ref}")
    for m in re.finditer(one, text, re.I):
        option = option_named(m.group(m.re.groups), options)  # the option's group is the last (after the word's)
        if words.get(m.group("word").lower(), (None, 0))[1] > 0 and option is not None:
            winners.add(option)
            spans.append(m.span())
    # "Clip A is the noisier one", "audio 2 has the more natural cadence"
    is_the = (rf"{ref}\s+(?:(?:is|was)\s+the\s+(?:(?P<dir>more|less)\s+)?(?P<word>\w+)\s+"
              r"(?:one|clip|of\s+the\s+two)\b|has\s+the\s+(?P<dir2>more|less)\s+(?P<word2>\w+)\s+[a-z]+\b)")
    for m in re.finditer(is_the, text, re.I):
        word, direction = (m.group("word") or m.group("word2")).lower(), (m.group("dir") or m.group("dir2") or "")
        option, sign = option_named(m.group(1), options), words.get(word, (None, 0))[1]
        sign *= -1 if direction.lower() == "less" else 1
        if option is not None and sign and (sign > 0 or len(options) == 2) and not denied(text, m.start() + 1):
            winners.add(option if sign > 0 else next(o for o in options if o != option))
            spans.append(m.span())
    # "More natural: clip B", "Less noise: B (A hums)"
    headed = rf"(?m:^\W*(?:(?P<dir>more|less)\s+)?(?P<word>[a-z]+)\s*(?:[:=]|→|->)\s*{ref}\W*(?:\([^)\n]*\)\W*)?$)"
    for m in re.finditer(headed, text, re.I):
        word, direction = m.group("word").lower(), (m.group("dir") or "").lower()
        sign = words.get(word, (None, 0))[1] * (-1 if direction == "less" else 1) if word in words else \
            (1 if direction == "less" and "clean" in attributes and re.fullmatch(_FAULT_NOUN, word) else 0)
        if sign > 0 and (word in COMPARATIVES or direction or word not in words):
            winners.add(option_named(m.group(_first_option(m)), options) or "")
            spans.append(m.span())
    winners.discard("")
    if len(options) == 2 and not spans:
        winners, spans = _alone(text, ref, options, words, "clean" in attributes)
    return winners, spans


def _sign(words: dict[str, tuple[str, int]], word: str, direction: str | None) -> int:
    """+1 when "<more|less> <word>" (or a comparative word) says better on the attribute, -1 worse, 0 neither (a
    plain adjective without more / less compares nothing)."""
    sign = words.get(word.lower(), (None, 0))[1] * (-1 if direction == "less" else 1)
    return sign if (word.lower() in COMPARATIVES) != bool(direction) else 0


_FAULT_NOUN = r"(?:background\s+)?(?:noise|hiss|hum|static|crackle|distortion|artifacts?|artefacts?|clicks?)"


def _alone(text: str, ref: str, options: list[str], words: dict[str, tuple[str, int]],
           clean: bool) -> tuple[set[str], list[tuple]]:
    """One option of a pair compared alone for the worse ("Audio 2 is less natural.", "Clip A is noisier", "Clip B
    has more background noise"): the winner is the other (praise alone, "B is cleaner", is the rules' to read, with
    what surrounds it)."""
    winners: set[str] = set()
    spans: list[tuple[int, int]] = []
    # a comparison qualified by a part or a time ("more natural in the first half") is no verdict
    alone = (rf"{ref}'?s?\s+(?:is|sounds|seems)\s+{DEGREE}(?:(?P<dir>more|less)\s+)?(?P<word>\w+)\b"
             r"(?!\s+(?i:than|in|during|at|for|on|when|while|until|after|before|except)\b)")
    found = [(m, _sign(words, m.group("word"), m.group("dir"))) for m in re.finditer(alone, text, re.I)]
    if clean:  # "has more / less (background) noise", "more hiss on the first recording"
        has = rf"{ref}\s+has\s+{DEGREE}(?P<dir>more|less)\s+{_FAULT_NOUN}\b(?!\s+than)"
        found += [(m, -1 if m.group("dir").lower() == "more" else 1) for m in re.finditer(has, text, re.I)]
        on = rf"\b(?P<dir>more|less)\s+{_FAULT_NOUN}\s+(?:in|on)\s+{ref}(?!\s+than)"
        found += [(m, -1 if m.group("dir").lower() == "more" else 1) for m in re.finditer(on, text, re.I)]
    for m, sign in found:
        option = option_named(m.group(_first_option(m)), options)
        if sign < 0 and option is not None and not denied(text, m.start()):
            winners.add(next(o for o in options if o != option))
            spans.append(m.span())
    return winners, spans


