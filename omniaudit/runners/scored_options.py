"""What a reply says about each option side by side: per-option scores, marks and verdict words, and comparisons.

Judges often answer a pairwise question with a score per option ("A: 6/10, B: 9/10", "Response 1: 4/5\\nResponse 2:
2/5", "A ✗ B ✓", "B is wrong, A is right", ``{"score_A": 6, "score_B": 9}``) or a comparison ("Response 2 >
Response 1", "A is worse than B"). Read as a choice, the first option named would win whatever the scores say: a judge
that is always right would look locked to slot A. So these are read as what they are: the option scored highest (a
tie when two share the top), or the comparison's winner.

:func:`judged` works on the reader's prepared English text, where slots are already ``A``/``B`` ("Response 1" is
``clip A``) and labels their canonical option; it returns the reading and the text with the judgements blanked, for the
reader's rules to read the rest (a verdict after the scores must agree with them). Scores count only when every
option of a pair (two or more labels of a label set) is scored in one kind (numbers, or marks), each option once; a
number followed by a unit ("2 seconds", "3 hisses") is a quantity, not a score.
"""

from __future__ import annotations

import json
import re

_NUMBER = r"[-+]?\d+(?:[.,]\d+)?"
_SCORE = (rf"(?P<num>{_NUMBER})\s*(?:/\s*(?P<den>\d+(?:[.,]\d+)?)|(?P<pct>%)|\s+out\s+of\s+(?P<den2>\d+))?"
          r"(?:\s*(?:points?|pts|stars?|分|点|점|балл\w*|punt\w*|punkte?|pontos?)(?!\w))?"
          r"(?=\s*(?:[,.;)\]|\n]|$|-\s|/\s|\((?!\d)|(?i:because|since|as|for|and|but|while|whereas|vs)\b))")
_GOOD = r"[✓✔✅☑👍]|(?i:\b(?:correct|right|good|pass(?:es|ed)?|yes|true|accurate|faithful)\b)"
_BAD = r"[✗✘❌×✕👎]|(?i:\b(?:incorrect|wrong|bad|fail(?:s|ed)?|no|false|inaccurate|unfaithful)\b)"
_SYMBOL = r"[✓✔✅☑👍✗✘❌×✕👎]"
_MARK = (rf"(?P<mark>{_SYMBOL}|(?:{_GOOD}|{_BAD})(?=\s*(?:[,.;)\]|\n]|$|(?i:and|but|while|whereas)\b)))")
_SEP = (r"(?:\s*(?:'s)?\s*(?i:score|rating|total)?\s*(?:[:=|\-\u2013]|→|->)\s*|\s+(?i:is|was|gets?|got|scores?|scored|"
        r"receives?|received|earns?|rated|sounds|seems|at)\s+(?:(?i:a|an|rated|score\s+of|rating\s+of)\s+)?|\s+)")
_PREFIX = r"(?i:\b(?:score|rating|grade)s?\s+(?:for|of)\s+)?"
_BETTER = (r"(?:>+|≻|(?i:is\s+(?:(?:much|slightly|clearly|far|a\s+bit|somewhat|definitely)\s+)?(?:better|superior|"
           r"preferable|preferred)\s+(?:than|to|over)|beats|outperforms|outranks|wins\s+over|(?:ranks?|ranked)\s+"
           r"(?:above|over|higher\s+than)))")
_WORSE = (r"(?:<+|≺|(?i:is\s+(?:(?:much|slightly|clearly|far|a\s+bit|somewhat|definitely)\s+)?(?:worse|inferior|"
          r"less\s+(?:good|faithful|natural|clean|accurate))\s+(?:than|to)|loses\s+to|(?:ranks?|ranked)\s+"
          r"(?:below|under|lower\s+than)))")
_RANK = r"(?i:\b(?:i(?:'d|\s+would)?\s+)?(?:rank|put|place|rate)\s+)"


# a score of something bad ("Noise level: A 8/10, B 2/10"): higher is worse, so the highest is not the choice
_LOWER_BETTER = re.compile(r"(?i:\b(?:noise|noisy|noisiness|hiss|hum|errors?|wer|cer|distortions?|artifacts?|"
                           r"artefacts?|clipping|latency|delay|lag|penalty|severity|defects?|problems?|issues?|"
                           r"mistakes?|loss|rank(?:ing)?|position|place)\b)")


def _option(name: str, options: list[str]) -> str | None:
    """The option ``name`` names: an option itself (any case), or for a slot pair a bare 1 or 2."""
    by_lower = {o.lower(): o for o in options}
    if name.lower() in by_lower:
        return by_lower[name.lower()]
    return {"1": "A", "2": "B"}.get(name) if sorted(options) == ["A", "B"] else None


def _value(m: re.Match) -> float:
    if "mark" in m.groupdict():
        return 1.0 if re.fullmatch(_GOOD, m.group("mark")) else 0.0
    num = float(m.group("num").replace(",", "."))
    den = m.group("den") or m.group("den2")
    if den:
        return num / float(den.replace(",", ".")) if float(den.replace(",", ".")) else float("nan")
    return num / 100 if m.group("pct") else num


def _scores(text: str, ref: str, options: list[str]) -> tuple[dict[str, float], list[tuple[int, int]]] | None:
    """Per option its one score (numbers first, else marks) and the spans read; None when not every option (two or
    more of a label set) is scored in one kind; no score (``{}``) when an option is scored twice differently or the
    line names a fault or a rank ("Noise: A 8, B 2", "Rank: A 1, B 2"), where the highest number is the worst."""
    for kind in (_SCORE, _MARK):
        found: dict[str, set[float]] = {}
        spans = []
        for m in re.finditer(rf"{_PREFIX}{ref}{_SEP}(?:{kind})", text):
            option = _option(m.group(1), options)
            if option is None or re.search(r"(?i:\b(?:not|n't|never|no)\s*$)", text[: m.start()]):
                continue
            line = text.rfind("\n", 0, m.start()) + 1
            heading = text[line: min([s for s, _ in spans if s >= line] + [m.start()])]
            if kind == _SCORE and _LOWER_BETTER.search(heading):
                return {}, [m.span()]  # scores of a fault (or ranks): the highest is not the best
            found.setdefault(option, set()).add(_value(m))
            spans.append(m.span())
        enough = len(found) == len(options) if len(options) == 2 else len(found) >= 2
        if enough:
            if any(len(v) > 1 or any(x != x for x in v) for v in found.values()):
                return {}, spans  # one option scored twice differently: no reading
            return {o: next(iter(v)) for o, v in found.items()}, spans
    return None


_TABLE = re.compile(r"(?:^[ \t]*\|.*\|[ \t]*(?:\n|$))+", re.M)
_TOTAL = re.compile(r"(?i:\W*(?:(?:final|overall|total)\s*)?(?:score|rating|total|overall|sum|grade)\W*)")


def _table_scores(text: str, ref: str, options: list[str]) -> tuple[dict[str, float], list[tuple[int, int]]] | None:
    """A markdown table with the options as columns and a score row ("| Score | 8 | 3 |"), or None."""
    for table in _TABLE.finditer(text):
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.group().splitlines()]
        header = next((r for r in rows if sum(bool(re.fullmatch(ref, c)) for c in r) >= 2), None)
        total = next((r for r in rows if r and _TOTAL.fullmatch(r[0])), None)
        if header is None or total is None or len(total) != len(header):
            continue
        found = {}
        for name, cell in zip(header, total, strict=True):
            named, score = re.fullmatch(ref, name), re.fullmatch(_SCORE + r"\W*", cell)
            option = _option(named.group(1), options) if named else None
            if option is not None and score is not None:
                found[option] = _value(score)
        if len(found) == len(options) if len(options) == 2 else len(found) >= 2:
            return found, [table.span()]
    return None


def _comparisons(text: str, ref: str, options: list[str]) -> tuple[set[str], list[tuple[int, int]]]:
    winners, spans = set(), []
    for pattern, first_wins in ((rf"{ref}\s*{_BETTER}\s*{ref}", True), (rf"{ref}\s*{_WORSE}\s*{ref}", False),
                                (rf"{_RANK}{ref}\s+(?i:above|over|ahead\s+of|before)\s+{ref}", True),
                                (rf"{_RANK}{ref}\s+(?i:below|under|behind|after)\s+{ref}", False)):
        for m in re.finditer(pattern, text):
            a, b = _option(m.group(1), options), _option(m.group(2), options)
            if a is None or b is None or a == b or re.search(r"(?i:\b(?:not|n't|never)\s*$)", text[: m.start()]):
                continue
            winners.add(a if first_wins else b)
            spans.append(m.span())
    return winners, spans


def _asked(text: str, spans: list[tuple[int, int]]) -> bool:
    """A judgement inside a question ("A > B?") is no judgement."""
    for start, _ in spans:
        ends = [i for i in (text.find(c, start) for c in ".!?\n") if i >= 0]
        if ends and text[min(ends)] == "?":
            return True
    return False


def judged(text: str, options: list[str], ref: str) -> tuple[str | None, str | None, str]:
    """``(option, reason, rest)``: the option the reply's scores or comparisons favour (reason None), or None and
    ``tie`` / ``conflict``; ``(None, None, text)`` when the reply has neither. ``ref``: a pattern whose group 1 is an
    option's name in ``text``; ``rest`` is ``text`` with the judgements blanked."""
    scored = _table_scores(text, ref, options) or _scores(text, ref, options)
    winners, compared = _comparisons(text, ref, options)
    spans = (scored[1] if scored else []) + compared
    if not spans or _asked(text, spans):
        return None, None, text
    rest = text
    for start, end in sorted(spans, reverse=True):
        rest = rest[:start] + " " * (end - start) + rest[end:]
    if scored:
        values = scored[0]
        if not values:
            return None, "conflict", rest
        top = max(values.values())
        best = {o for o, v in values.items() if v == top}
        if len(best) > 1:
            return (None, "tie", rest) if not winners else (None, "conflict", rest)
        winners |= best
    if len(winners) != 1:
        return None, "conflict", rest
    return next(iter(winners)), None, rest


_SCORE_KEY = re.compile(r"(?i:^(?:score|rating|grade|points?)?[\s_-]*(?:of|for)?[\s_-]*(?:response|audio|clip|option|"
                        r"candidate|output|description)?[\s_-]*\(?([A-Za-z0-9 ]+?)\)?[\s_-]*"
                        r"(?:score|rating|grade|points?)?$)")


def json_scores(obj: dict, options: list[str]) -> tuple[str | None, str | None] | None:
    """The option a JSON score object favours (``{"score_A": 6, "score_B": 9}``, ``{"scores": {"A": 7, "B": 3}}``),
    ``(None, "tie")``, or None when the object holds no score per option."""
    for key in ("scores", "score", "ratings", "rating"):
        if isinstance(obj.get(key), dict):
            obj = obj[key]
    pair = sorted(options) if sorted(options) in (["A", "B"], ["1", "2"]) else None
    slots = {"a": 0, "b": 1, "1": 0, "2": 1, "first": 0, "second": 1} if pair else {}
    names = {o.lower(): o for o in options}
    values: dict[str, float] = {}
    for key, value in obj.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        m = _SCORE_KEY.match(str(key))
        name = m.group(1).strip().lower() if m else ""
        option = names.get(name) or (pair[slots[name]] if pair and name in slots else None)
        if option is not None:
            if option in values and values[option] != value:
                return None, "conflict"
            values[option] = float(value)
    enough = len(values) == len(options) if len(options) == 2 else len(values) >= 2
    if not enough:
        return None
    top = max(values.values())
    best = [o for o, v in values.items() if v == top]
    return (best[0], None) if len(best) == 1 else (None, "tie")


def loads_lenient(body: str) -> tuple[object, bool]:
    """A JSON object as models write it (single quotes, a trailing comma), and whether a key repeats with another
    value (``{"answer": "A", "answer": "B"}``: a conflict, never the last value)."""
    repeated = False

    def pairs(items: list[tuple[str, object]]) -> dict:
        nonlocal repeated
        out: dict = {}
        for key, value in items:
            if key in out and out[key] != value:
                repeated = True
            out[key] = value
        return out

    attempts = (body, re.sub(r",\s*([}\]])", r"\1", body))
    for attempt in (*attempts, *(re.sub(r"'([^'\n]*)'", r'"\1"', a) for a in attempts)):
        try:
            return json.loads(attempt, object_pairs_hook=pairs), repeated
        except ValueError:
            repeated = False
    return None, False
