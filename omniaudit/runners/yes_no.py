"""Yes or no, as a reply to a closed yes/no question states it ("Is there a dog barking in the clip?").

The label reader reads "Yes." and "no"; a yes/no answer is more often an answer word that opens a sentence ("Yep —
there's a dog", "Nope.", "Absolutely not, it's just wind.", "Correct, a dog barks twice.", "Sì.", "네, 들려요.") or a
statement of absence or presence ("No barking can be heard.", "There is no dog in the clip.", "Not that I can
hear.", "I don't think so.", "I can hear a dog"). :func:`read_yes_no` reads:

1. a reply that opens on an answer word of a glossed language (:data:`YES` / :data:`NO`; "no doubt" is no "no", "nicht
   sicher" no "nicht": negation particles are not answer words);
2. else, in English, a first sentence that states absence (one negation, of the kind :data:`ABSENT` lists) or
   presence (:data:`PRESENT`, no negation).

An explicit final answer that closes the reply ("... Final answer: yes.", "My answer is no.") is read first, after
any self-correction. It abstains (None and the reason) on a hedge, a reversal after the answer, a later sentence or
answer word of the other polarity ("Yes and no", "No. Yes."), a preamble ("Sure, let me listen"), and returns None
(no opinion: the label reader decides) on anything else, e.g. two negations ("It's not the case that there is no
barking").
"""

from __future__ import annotations

import re

from omniaudit.runners.commitment import MAYBE, REVERSAL, UNSURE, Reading

# answer words that open a reply, in the glossed languages (longest first where one holds another)
YES = ("yes", "yeah", "yep", "yup", "yea", "definitely", "absolutely", "correct", "true", "affirmative", "indeed",
       "sí", "sì", "si", "claro", "efectivamente", "absolutamente", "ja", "jawohl", "genau", "stimmt", "absolut",
       "oui", "effectivement", "absolument", "tout à fait", "sim", "com certeza", "certo", "esatto", "assolutamente",
       "да", "конечно", "はい", "ええ", "네", "예", "是的", "是", "有", "对")
NO = ("no", "nope", "nah", "negative", "false", "incorrect", "not at all", "absolutely not", "definitely not",
      "certainly not", "of course not", "para nada", "en absoluto", "nein", "nee", "keineswegs", "non",
      "pas du tout", "absolument pas", "não", "nao", "de jeito nenhum", "per niente", "assolutamente no", "нет",
      "いいえ", "いや", "아니요", "아니오", "아뇨", "没有", "不是", "没", "不", "否")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORDS = sorted({*YES, *NO}, key=len, reverse=True)
# answer words that are nothing else: the rest must stand before punctuation or the end, since they double as a
# negation, a determiner or a conjunction ("No audio was attached", "Não consigo ouvir", "Si fuera...", "不确定")
_ALONE = ("yes", "yeah", "yep", "yup", "yea", "nope", "nah", "nein", "oui", "sim", "да", "はい", "いいえ", "네",
          "아니요", "아니오", "아뇨")
_FILLER = r"(?i:(?:well|so|oh|ah|um|uh|hmm+|pues|bueno|então|bem|allora|beh|alors|eh|also|ну)\W+)?"
_OPENER = re.compile(r"^[\W_]*" + _FILLER + "(" + "|".join(
    re.escape(w) + (r"(?![\w'])" if w in _ALONE or " " in w else r"(?=\s*(?:[,，。.!！、~…:;\u2014\u2013-]|$))")
    for w in _WORDS) + ")", re.I)
_NOT_AN_ANSWER = re.compile(r"(?i:^\s*(?:doubt|question|idea|clue|problem)\b|^\s*(?:sure|sicher|seguro|segura|"
                            r"s[uû]r|certo|certa|уверен)\b)")  # "no doubt", "no idea", "nicht sicher"
_PREAMBLE = re.compile(r"(?i:\b(?:let\s+me|i'll|i\s+will|here's|here\s+is|happy\s+to|i\s+can\s+help)\b)")

_NEGATION = re.compile(r"(?i:\b(?:no|not|never|none|nothing|neither|nor|without)\b|n't\b|\bcannot\b)")
ABSENT = re.compile(r"(?i:^(?:there\s+(?:is|are|was|were)\s+no\b|there's\s+no\b|"
                    r"there\s+(?:isn't|aren't|wasn't|weren't|is\s+not|are\s+not)\b|"
                    r"(?:i\s+)?(?:can't|cannot|can\s+not|don't|do\s+not|didn't|did\s+not)\s+(?:hear|detect|notice)\b|"
                    r"no\s+[\w\s'-]{1,30}?\s+(?:(?:can\s+be|could\s+be|is|was|are|were)\s+)?(?:heard|audible|present|"
                    r"detected|detectable)\b|not\s+that\s+i\s+(?:can\s+)?(?:hear|tell|know)\b|"
                    r"i\s+(?:don't|do\s+not)\s+think\s+so\b|(?:nothing|none)\s+(?:like\s+that|at\s+all)\b))")
PRESENT = re.compile(r"(?i:^(?:there\s+(?:is|are|was|were)\s+(?:a|an|some|one|two|three|several|definitely|clearly)\b|"
                     r"there's\s+(?:a|an|some|one|definitely|clearly)\b|"
                     r"i\s+(?:can\s+)?(?:clearly\s+|definitely\s+)?hear\b|"
                     r"(?:the\s+)?(?:clip|audio|recording|video)\s+(?:clearly\s+)?(?:contains|includes|features)\b(?!\s+(?:only|just|nothing|no)\b)|"
                     r"(?:a|the)\s+[\w-]+\s+(?:is|can\s+be|was)\s+(?:clearly\s+)?(?:heard|audible|present)\b))")
_SENTENCE = re.compile(r"[^.!?;\n]+")
# an explicit final answer that closes the reply outranks what came before it (a self-correction)
_FINAL = re.compile(r"(?i:\b(?:final\s+answer|my\s+(?:final\s+)?answer\s+is|answer)\s*[:=\-]?\s*\**(yes|no)\b\W*$)")
_TRAILING = re.compile(r"(?i:[,;\u2014-]\s*(yes|no)\W*$)")  # "There isn't any barking, no."


def _opener(text: str) -> tuple[str | None, str]:
    """(``yes`` / ``no`` of an answer word opening ``text``, or None; the text after it)."""
    m = _OPENER.match(text)
    if m is None or _NOT_AN_ANSWER.match(text[m.end():]):
        return None, text
    word = m.group(1).lower()
    return ("yes" if word in YES else "no"), text[m.end():]


def _statement(sentence: str) -> str | None:
    """``no`` for an English sentence of absence with one negation, ``yes`` for one of presence with none."""
    sentence = re.sub(r"(?i:^\W*(?:no\s+doubt|without\s+a\s+doubt|definitely|clearly)\W+)", "",
                      sentence).strip(" \t*_\"'`-\u2014")  # "No doubt - the applause is audible"
    trailing = _TRAILING.search(sentence)
    if trailing:
        sentence = sentence[: trailing.start()]
    negations = len(_NEGATION.findall(sentence))
    said = "no" if ABSENT.match(sentence) and negations == 1 else "yes" if PRESENT.match(sentence) and not \
        negations else None
    return None if trailing and said and trailing.group(1).lower() != said else said


def _after_first_sentence(text: str) -> str:
    text = text.lstrip()
    first = _SENTENCE.match(text)
    return text[first.end():] if first else ""


def _corrected(rest: str) -> Reading:
    """The answer word that opens the clause after the last reversal ("No... well, actually yes, there is music."),
    when nothing after it turns again; else ``reversed``."""
    after = rest[list(REVERSAL.finditer(rest))[-1].end():]
    said, tail = _opener(after)
    if said is None or REVERSAL.search(tail) or UNSURE.search(tail) or MAYBE.search(tail):
        return Reading(None, "reversed")
    return Reading(said)


def read_yes_no(text: str, english: str, lang: str) -> Reading | None:
    """The reply's yes or no (see the module docstring); ``text`` as written, ``english`` its gloss, ``lang`` its
    language. None: this reader has no opinion."""
    final = _FINAL.search(text)
    if final and not UNSURE.search(english) and not MAYBE.search(text[final.end():]):
        return Reading(final.group(1).lower())  # "No... wait, yes - a knock at 0:07. Final answer: yes."
    # "No doubt about it - yes, ...": the doubt denied, then the answer
    said, rest = _opener(re.sub(r"(?i:^\W*no\s+doubt(?:\s+about\s+it)?\W+)", "", text.strip()))
    if said is None and lang == "en":
        sentences = _SENTENCE.findall(text)
        said = _statement(sentences[0]) if sentences else None
        rest = text[text.find(sentences[0]) + len(sentences[0]):] if said else rest
    if said is None:
        return None
    if UNSURE.search(english) or MAYBE.search(english):
        return Reading(None, "hedged")
    if REVERSAL.search(rest):
        return _corrected(rest)
    if REVERSAL.search(_after_first_sentence(english)):
        return Reading(None, "reversed")  # "Ja. Warte, nein.": a turn the gloss makes English
    if _PREAMBLE.search(rest[:40]):
        return None  # "Absolutely, let me listen again": politeness, not the answer
    other = [(_opener(s)[0] or (_statement(s) if lang == "en" else None)) for s in _SENTENCE.findall(rest)]
    other_word = "no" if said == "yes" else "yes"  # "No. No dog." says no twice; "Yes and no" both
    both = re.match(r"(?i:\W*(?:and|or|but|&|/)?\s*(?:also\s+|then\s+again\s+)?" + other_word + r"\b"
                    r"(?!\s+(?:doubt|question)))", rest)
    if both or any(o and o != said for o in other):
        return Reading(None, "conflict")  # "Yes and no", "No. Yes, there is."
    return Reading(said)
