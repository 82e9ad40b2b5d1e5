"""How a free-form answer names an option of a closed item: :func:`read_answer` (the option, or None and why not)
and :func:`parse_answer` (the option alone, re-exported by ``runners.items``).

A misreading is worse than a non-reading: it becomes a finding. So the reader abstains on doubt, with a reason
(:data:`REASONS`), and reads the reply, of the prompt only its question sentence (:func:`question_of`; the whole
prompt's candidate texts once decided whether "B is more faithful to the voice" answered it). Option sets: two
ordinal slots (``A``/``B`` or ``1``/``2``, pairwise judging) or a label set (emotions, languages, ...). The rules, in
order:

* noise (:func:`~omniaudit.answer_language.unreadable`) and empty replies name nothing;
* a structured answer is read exactly: a JSON object's ``answer``/``choice``/``verdict``/... field, ``[[B]]``
  (``[[C]]`` is a tie), ``\\boxed{B}``; fields naming different options are a ``conflict``;
* a language code is a language where the options are languages ("es", "pt-BR", "Language: de");
* the answer is prepared: Unicode NFKC (full-width ``Ｂ`` is ``B``), markup removed, and a Spanish, Chinese, German or
  French answer glossed into English phrase by phrase (``omniaudit.answer_language``: "Respuesta: B" is
  "answer: B", "答案是A" is "the answer is A", "Ich wähle A" is "I choose A", "le premier" is "the first");
* ordinal references name a slot where the options are A/B or 1/2: "the first/second one", "the former/latter",
  "Audio 1/2", "clip 2", "Description A", "option (B)", and, for 1/2 sets, a bare 1 or 2 that is not a quantity
  ("at 2 seconds" is not option 2);
* explicit choices name an option: a cue ("Answer: B", "Response: B", "my choice is clip B", "if forced: A"), a choice
  verb ("I choose B", "I'd go with B"), a conclusion ("..., so B."), an attribute-free verdict ("B is better"), a
  sentence or line that is only the option ("B.", "I think clip B."), or an answer that leads with it ("B - it has
  less hiss", "Angry, not sad"); comparatives of the judged attribute ("B is cleaner") only describe, unless their
  words are all the question sentence's own ("The first clip has less background noise" to "Which clip has cleaner
  audio, with less background noise?");
* doubt voids a choice: one inside a question ("maybe it's Polish?"), a hypothetical or first impression ("I would
  have said A", "At first I thought A") or a negated claim ("It is not the case that A is better") is no choice
  (``hedged``, ``negated``); a choice followed by words that take it back ("Wait, no: B is more faithful") is
  ``reversed``; choices of two options are read only when the later one follows such words or is a final answer
  ("A. Actually no, B. Final answer: B."), else ``conflict``;
* a negated ("not A", "anything but happy") or coordinated ("A or B", "happy/sad") mention names nothing; a label-set
  answer without an explicit choice names the option only if it is the one option mentioned, no other label of its
  kind is ("Chinese (Cantonese)" is not Mandarin), and it does not say it cannot tell (``hedged``);
* a supplied label the answer only reports ("the reference label is happy", "German, according to the label") is no
  choice: "..., but I hear sadness" is ``sad``; agreeing with it ("The label says angry. I agree.") reads it;
* a label is named by its own words or their stems and aliases ("Surprise." is ``surprised``, "sadness" is ``sad``,
  "Mandarin" or "中文" is ``Mandarin Chinese``, "traurig" is ``sad``); a form that would name two options names
  neither; courtesy ("Happy to help!") names nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from omniaudit.answer_language import language, prepare, unreadable
from omniaudit.runners.choice_glosses import ALIASES as _ALIASES
from omniaudit.runners.choice_glosses import CHOICE_GLOSSES, particles_dropped
from omniaudit.runners.reasoning import split_reasoning
from omniaudit.runners.scored_options import Judgement, json_scores, judged, loads_lenient, per_option

_MARKUP = re.compile(r"[*`#]|(?<!\w)_+|_+(?!\w)")  # emphasis marks; underscores inside words ("audio_described") stay
_SLOT = r"(?:clip|option|candidate|slot|sample|recording|audio|response|description)"
_LETTER_REF = rf"(?:(?i:{_SLOT})\s*)?\(?\b([AB])\b\)?"  # the letter is case-sensitive: "a bit" is not slot A
_HEDGE = (r"(?:i\s+think|i\s+believe|i'?d\s+say|i\s+would\s+say|i\s+guess|probably|definitely|clearly|likely|"
          r"certainly|obviously|surely|it'?s|it\s+is|that'?s|that\s+is|(?:(?:my|the)\s+)?(?:final\s+)?answer"
          r"(?:\s+is)?)")
_CONCLUDE = (r"(?i:\b(?:so|thus|therefore|hence|overall|ultimately|finally|in\s+conclusion|in\s+summary|"
             rf"to\s+conclude)\b\s*[,:]?\s*(?:{_HEDGE}\s*[:,]?\s*)?)")
_END = r"(?=[^\w\n]*(?:\n|$)|\s*[.!;,)\]])"  # the option ends its clause
_NEGATED = re.compile(r"(?i:(?:\bnot|n't|\bnever|\bno|\bwithout)\s+(?:\w+\s+)?)$")
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")
_FORCED = (r"if\s+(?:i'?m\s+|i\s+am\s+|i\s+was\s+)?forced(?:\s+to\s+(?:choose|pick|answer|decide))?|"
           r"if\s+i\s+(?:had|have|must|need)\s+to\s+(?:choose|pick|say|answer|decide)|forced\s+to\s+choose|"
           r"leaning\s+(?:towards?|to)|i'?d\s+lean\s+(?:towards?|to)")
_AB_CUE = (r"(?i:\b(?:answer|choice|verdict|decision|pick|selection|preference|winner|win\s+for|"
           rf"(?:better|preferred)\s+(?:one|clip|option|candidate|sample|recording)|(?:preferred|best|better|final)"
           r"(?=\s*[:=])|"
           rf"{_FORCED})\b(?:\s+(?:is|would\s+be|"
           r"will\s+be|goes\s+to))?(?:\s+for)?\s*[:=\-\u2013,]?\s*)")
_AB_VERB = (r"(?i:\b(?:choose|chose|choosing|pick|picked|picking|select|selected|selecting|prefer|preferred|"
            r"go\s+with|going\s+with|went\s+with|opt\s+for|vote\s+for|recommend)\s+)")
_AB_GOOD = (r"(?i:\s+(?:wins\b|(?:is|was|sounds|seems|would\s+be)\s+(?:(?:clearly|much|slightly|definitely|"
            r"somewhat|far|overall|the|a\s+bit)\s+)*(?:better|best|preferred|preferable|superior|the\s+winner|"
            r"(?:my|the)\s+(?:choice|pick|answer)|correct)\b))")
_LABEL_CUE = (r"(?i:\b(?:answer|label|verdict|choice|option|prediction|classification|category|class|emotion|language|"
              rf"{_FORCED})\b(?:\s+(?:is|would\s+be|will\s+be))?\s*[:=\-\u2013,]?\s*)")
_LABEL_VERB = (r"(?i:\b(?:choose|chose|pick|picked|select|selected|go\s+with|going\s+with|"
               r"(?:classify|label|identify|classified|labelled|labeled|identified)(?:\s+(?:it|this|the\s+\w+))?"
               r"\s+as)\s+)")
_NOT_CLAUSE = r"(?!\s*(?i:which|with|that|whose|who)\b)"  # "A, which hisses, is noisier" does not lead with A
# the option a self-correction gives instead ("A. Actually no, B.", "Wait - it's B")
_INSTEAD = (r"(?i:\b(?:actually|wait|no|correction|i\s+mean|or\s+rather|scratch\s+that|make\s+that|on\s+second\s+"
            r"thoughts?)\b)[^\w\n]*(?:(?i:better|rather|make\s+it|i'?ll\s+(?:say|go\s+with)|it'?s|instead)\s+)?")
_ITS = r"(?i:\b(?:it'?s|it\s+is|that'?s|that\s+is)\s+)"  # "..., it's B."

# ------------------------------------------------------------------------------------- ordinal slots (A/B, 1/2)
_SLOT_NOUN = r"(?:one|clip|audio|option|sample|recording|candidate|description|response|track|file|version|choice)"
_ORDINAL = {"first": "A", "former": "A", "second": "B", "latter": "B", "one": "A", "two": "B", "1": "A", "2": "B",
            "a": "A", "b": "B"}
# "the first clip", "second one", "the latter" (then a verb or the end of the clause), "Audio 2", "clip (1)", "#2"
_ORDINAL_NOUN = re.compile(rf"(?i:\b(?:the\s+)?(first|second|former|latter)\s+{_SLOT_NOUN}\b)(?!\s*\(?[AB12]\b)")
_ORDINAL_BARE = re.compile(r"(?i:\bthe\s+(first|second|former|latter)\b)(?=\s*(?:[.,;:!?)]|$|(?i:is|was|sounds?|"
                           r"seems?|has|had|wins|would|does|did|appears?|clearly|definitely|for\s+sure|please|"
                           r"because|since|as|over)\b))")
_ORDINAL_ALONE = re.compile(r"(?i:^(\W*)(first|second)(?=\W*$))")
_SLOT_NUMBER = re.compile(rf"(?i:\b(?:the\s+)?(?:{_SLOT}|track|number|no\.|#)\s*\(?\s*(1|2|one|two)\b\)?)(?![.,]\d)|"
                          rf"(?i:#)\s*(1|2)\b(?![.,]\d)")
_QUANTITY = (r"(?i:\s*(?:s|sec|secs|seconds?|ms|msec|minutes?|min|mins|hours?|h|times?|db|hz|khz|x|%|/|:|\.\d|,\d|"
             r"st|nd|rd|th|star|stars|points?|of|out))\b|\s*[%:/]")
_BARE_DIGIT = re.compile(rf"(?<![\w.,/#-])(?<!\d:)([12])(?![\w%/]|[.,]\d)(?!{_QUANTITY})")


def _ordinals(text: str, digits: bool) -> str:
    """Ordinal references as slot letters: "the second one" -> "clip B", "Audio 1" -> "clip A" (and, for a 1/2 set,
    a bare 1 or 2 that is not a quantity -> A / B)."""
    if digits:
        text = re.sub(r"\b([AB])\b", lambda m: m.group(1).lower(), text)  # letters name nothing in a 1/2 set
    text = _SLOT_NUMBER.sub(lambda m: f"clip {_ORDINAL[(m.group(1) or m.group(2)).lower()]}", text)
    text = _ORDINAL_NOUN.sub(lambda m: f"clip {_ORDINAL[m.group(1).lower()]}", text)
    text = _ORDINAL_BARE.sub(lambda m: f"clip {_ORDINAL[m.group(1).lower()]}", text)
    text = "\n".join(_ORDINAL_ALONE.sub(lambda m: f"{m.group(1)}clip {_ORDINAL[m.group(2).lower()]}", line)
                     for line in text.split("\n"))
    if digits:
        text = _BARE_DIGIT.sub(lambda m: _ORDINAL[m.group(1)], text)
    # "the B" (Spanish "la B") is B, "the option B" (Portuguese "a opção B") is option B
    return re.sub(rf"(?i:\bthe\s+)(?=(?:(?i:{_SLOT}|clip)\s+)?\(?[AB]\b)", "", text)


# a statement about one slot whose predicate is the question's own ("clip A has less background noise")
_VERB = r"(?:is|was|has|had|have|sounds?|seems?|appears?|contains?|gives?|offers?|feels?|comes?\s+across\s+as)"
_PREDICATE = re.compile(rf"{_LETTER_REF}\s+(?:{_VERB}\s+)?(?P<pred>[^.;!?,\n]*?)(?=\s*(?:[.;:!?,\n]|$|"
                        r"\b(?i:than|because|since|but|while|whereas|as|though|although)\b))")
_FILLER = {"two", "pair", "both", "ones", "clips", "is", "was", "the", "a", "an", "much", "slightly", "clearly",
           "definitely", "noticeably", "overall",
           "very", "far", "bit", "somewhat", "considerably", "significantly", "by", "audio", "clip", "sound", "one",
           "with", "to", "of", "its", "it", "and", "also", "still", "even", "just", "quite", "way", "lot"}
_NOT_COMPARATIVE = {"reference", "speaker", "number", "other", "either", "neither", "whether", "rather", "together",
                    "after", "ever", "never", "over", "under", "answer", "order", "water", "player", "listener",
                    "power", "later", "paper", "user", "letter", "filter", "computer", "character"}
_COMPARATIVE = {"more", "less", "fewer", "most", "least", "same", "better", "best", "worse", "worst", "closer"}


def question_of(prompt: str | None) -> str | None:
    """The prompt's question proper: its last sentence that ends with "?". Never the rest: a pairwise prompt's
    candidate texts once decided whether "B is more faithful to the voice" answered it."""
    asked = re.findall(r"[^.!?\n]*\?", prompt or "")
    return asked[-1].strip() if asked else None


def _question_choices(text: str, question: str | None) -> list[tuple[int, int, str]]:
    """Spans of statements that answer ``question`` (the sentence :func:`question_of` finds) in its own comparative
    words (see the module docstring)."""
    question = question_of(question)
    if not question:
        return []
    asked = set(re.findall(r"[a-z]+", _MARKUP.sub("", prepare(question)).lower()))
    found = []
    for m in _PREDICATE.finditer(text):
        words = [w for w in re.findall(r"[a-z']+", m.group("pred").lower()) if w not in _FILLER]
        comparative = [w for w in words if w in _COMPARATIVE or (w.endswith("er") and len(w) > 4
                                                                   and w not in _NOT_COMPARATIVE)]
        if words and comparative and all(w in asked for w in words):
            found.append((m.start(1), m.end(1), m.group(1)))
    return found


_SUFFIXES = ("fulness", "ness", "ful", "ity", "ed", "ing", "ly", "es", "s", "e")


def _stem(word: str) -> str:
    """A light English stem: "surprised" / "surprise" -> "surpris", "happiness" / "happy" -> "happi"."""
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    return w[:-1] + "i" if w.endswith("y") else w


def _label_forms(options: list[str]) -> dict[str, str]:
    """Surface form (lower case) -> option: each option, its aliases, and the stems' other common forms; a form that
    two options share names neither."""
    claims: dict[str, set[str]] = {}
    for option in options:
        key = option.lower()
        forms = {key, *_ALIASES.get(key, [])}
        if " " not in key and len(key) > 2:  # a one-letter label's stem is no label ("be" is not "B")
            forms |= {_stem(key) + s for s in ("e", "ed", "ness", "ful")}  # not "-ly": "Sadly, ..." is no label
        for form in forms:
            claims.setdefault(form.lower(), set()).add(option)
    return {form: next(iter(owners)) for form, owners in claims.items() if len(owners) == 1}


def _canonical_labels(text: str, options: list[str]) -> str:
    """Every surface form of an option replaced by the option itself ("Surprise." -> "surprised.")."""
    forms = _label_forms(options)
    pieces = []
    for form in sorted(forms, key=len, reverse=True):
        if _UNSPACED.search(form):  # Chinese, Japanese, Korean: a form is found inside a longer run of text
            pieces.append(f"({re.escape(form)})")
        elif re.search(r"[^\x00-\u024f]", form):  # Cyrillic stems: the word that starts with the stem
            pieces.append(rf"(?<!\w)({re.escape(form)})\w*")
        else:
            pieces.append(rf"(?<!\w)({re.escape(form)})(?!\w)")
    pattern = re.compile("|".join(pieces), re.I)
    def option(m: re.Match) -> str:
        form = next(g for g in m.groups() if g)
        return f" {forms[form.lower()]} " if _UNSPACED.search(form) else forms[form.lower()]  # "angryいる": a word

    return pattern.sub(option, text)


_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


# ------------------------------------------------------------------------------------------------- label kinds
_EMOTIONS = {"angry", "happy", "sad", "fearful", "disgust", "surprised", "calm", "neutral"}
_LANGUAGES = {"english", "french", "german", "japanese", "spanish", "italian", "portuguese", "russian",
              "mandarin chinese", "cantonese", "cantonese chinese", "korean", "arabic", "hindi", "dutch", "polish",
              "turkish", "swedish"}
_KINDS = (_EMOTIONS, _LANGUAGES, {"male", "female"})
# ISO 639 codes (a region subtag may follow: "pt-BR", "zh_CN") -> the language names an option may carry
_CODES = {"en": ["english"], "eng": ["english"], "fr": ["french"], "fra": ["french"], "fre": ["french"],
          "de": ["german"], "deu": ["german"], "ger": ["german"], "ja": ["japanese"], "jpn": ["japanese"],
          "es": ["spanish"], "spa": ["spanish"], "it": ["italian"], "ita": ["italian"], "pt": ["portuguese"],
          "por": ["portuguese"], "ru": ["russian"], "rus": ["russian"],
          "zh": ["mandarin chinese", "chinese", "mandarin"], "cmn": ["mandarin chinese", "mandarin", "chinese"],
          "zho": ["mandarin chinese", "chinese", "mandarin"],
          "yue": ["cantonese", "cantonese chinese"], "ko": ["korean"], "kor": ["korean"], "ar": ["arabic"],
          "ara": ["arabic"], "hi": ["hindi"], "hin": ["hindi"], "nl": ["dutch"], "nld": ["dutch"], "pl": ["polish"],
          "pol": ["polish"], "tr": ["turkish"], "tur": ["turkish"], "sv": ["swedish"], "swe": ["swedish"]}
_CODE = r"([A-Za-z]{2,3})(?:[-_][A-Za-z]{2}|[-_]\d{3}|[-_][A-Z][a-z]{3})?"
_CODE_ALONE = re.compile(rf"^\W*{_CODE}\W*$")
_CODE_CUE = re.compile(rf"(?i:(?:\b(?:language|lang|code|answer|label|prediction)(?:\s+code)?|语言代码|语言|代码)\s*"
                       rf"[:=]\s*[\"']?){_CODE}"
                       r"(?![\w-])")


def _language_codes(text: str, options: list[str]) -> str:
    """A language code standing alone or after a cue ("es", "Language: pt-BR") as the option it names, before the
    Spanish gloss reads "es" as "it is"; elsewhere a two-letter word is a word ("it", "de")."""
    names = {o.lower(): o for o in options}

    def option(m: re.Match) -> str:
        found = next((names[n] for n in _CODES.get(m.group(1).lower(), []) if n in names), None)
        return m.group(0) if found is None else m.group(0)[: m.start(1) - m.start()] + found

    if not any(n in _LANGUAGES or n in ("chinese", "mandarin") for n in names):
        return text
    alone = _CODE_ALONE.match(text)
    if alone:
        found = next((names[n] for n in _CODES.get(alone.group(1).lower(), []) if n in names), None)
        return found or text
    return _CODE_CUE.sub(option, text)


# ---------------------------------------------------------------------------------------------------- doubt
class Reading(NamedTuple):
    """What a reply says: the ``option`` it names, or None and the ``reason`` (one of :data:`REASONS`)."""

    option: str | None
    reason: str | None = None


REASONS = {
    "empty": "nothing written",
    "noise": "no language (byte noise, a repeated token)",
    "none": "no option named",
    "tie": "the options judged equal, or neither chosen",
    "conflict": "several options chosen or named, none of them finally",
    "negated": "the only choice is negated (\"it is not the case that A is better\")",
    "hedged": "no commitment: a hypothetical, a question, or \"hard to tell\"",
    "reversed": "the choice is taken back (\"wait, no\", \"actually\") without a new one",
    "label": "only the supplied label is reported, neither adopted nor replaced",
    "reasoning-only": "only a reasoning trace (<think>, reasoning_content) names an option, or it was cut off",
    "language": "written in a language the readers do not gloss",
}
# the rest of a clause, up to a turn ("At first it sounds sad, but overall the emotion is angry")
_SAME_CLAUSE = r"(?:(?!\b(?:but|however|yet|though|although|now|whereas)\b)[^.!?;:\n])*"
# a choice inside a hypothetical or a first impression is no commitment ("I would have said A", "at first, A")
_HYPOTHETICAL = re.compile(
    r"(?i:\b(?:would\s+have\s+(?:said|chosen|picked|gone\s+with|preferred)|might\s+have\s+(?:said|chosen|picked)|"
    r"was\s+going\s+to\s+(?:say|choose|pick|go\s+with)|at\s+first(?:\s+glance)?|initially|"
    r"i\s+(?:first\s+|initially\s+)?(?:thought|assumed|guessed)|(?:my\s+)?first\s+(?:impression|guess|thought)|"
    r"i\s+had\s+thought|(?:one|someone|somebody|you)\s+(?:might|could|would)\s+(?:say|think|argue)|"
    r"maybe|perhaps|possibly|(?:it\s+)?(?:could|might|may)\s+(?:be|well\s+be|have\s+been))\b"
    rf"{_SAME_CLAUSE})$")
# a choice inside a negated claim is no choice ("It is not the case that A is better", "I don't think A is better")
_NEGATED_CLAIM = re.compile(
    r"(?i:(?:\bnot\s+the\s+case|\bnot\s+true|\bisn'?t\s+true|\bdon'?t\s+think|\bdo\s+not\s+think|"
    r"\bwouldn'?t\s+say|\bwould\s+not\s+say|\bcan'?t\s+say|\bcannot\s+say|\bdisagree|\bfalse\s+that|"
    rf"\bwrong\s+to\s+say|\bnot\s+convinced|\bno\s+way)\b{_SAME_CLAUSE})$")
# words that take back what came before ("Wait, no", "Actually", "On second thought", "A... no")
_REVERSAL = re.compile(
    r"(?i:\b(?:wait|actually|on\s+second\s+thoughts?|correction|scratch\s+that|i\s+mean|or\s+rather|then\s+again|"
    r"(?:after|on)\s+(?:listening|hearing|thinking)(?:\s+(?:again|more|twice|it\s+over))?|on\s+reflection|"
    r"changing\s+my\s+(?:answer|mind)|i\s+take\s+(?:it|that)\s+back|let\s+me\s+reconsider|hmm+|just\s+kidding)\b|"
    r"(?:^|[.!?;:,]\s*|\s-+\s*|\.\.\.\s*)no\s*(?:[,:;.!-]|$))")
# a second thought after a choice leaves it open ("A... or maybe B.", "B, or perhaps A")
_SECOND_THOUGHT = re.compile(r"(?i:\bor\s+(?:maybe|perhaps|possibly|probably)\b|\bor\s+is\s+it\b)")
# a final answer outranks an earlier choice it contradicts
_FINAL = re.compile(r"(?i:\b(?:final(?:ly)?|answer|verdict|decision|in\s+the\s+end|ultimately|in\s+conclusion|"
                    r"to\s+conclude|overall)\b[^.!?\n]{0,24})$")
_UNSURE = re.compile(r"(?i:\b(?:(?:hard|difficult|impossible)\s+to\s+(?:determine|say|tell|judge|decide|know)|"
                     r"can'?t\s+(?:tell|determine|say|decide|judge)|cannot\s+(?:tell|determine|say|decide|judge)|"
                     r"not\s+sure|unsure|unclear|uncertain|i\s+don'?t\s+know|no\s+idea)\b)")
_TIE = re.compile(r"(?i:\b(?:tie|tied|a\s+draw|equal(?:ly)?|(?:about|roughly|exactly)\s+the\s+same|no\s+difference|"
                  r"(?:both|neither)\b|can'?t\s+(?:choose|decide|pick)\s+between|indistinguishable)\b)")
_ASKED_NO = re.compile(r"\?\s*(?i:no|nope)\b\W")  # "Happy? No. The speaker sounds sad.": the question is answered
_UNCOMMITTED = re.compile(r"(?i:\b(?:likely|almost|possibly|probably|might|could|maybe|perhaps)\b)")
_MAYBE_AFTER = re.compile(r"\w+\W*(?i:maybe|perhaps|possibly|probably\s+not|not\s+sure|i\s+guess)\b")
_MAYBE = re.compile(r"(?i:\b(?:maybe|perhaps|possibly|(?:could|might|may)\s+(?:well\s+)?be)\b)")
_COURTESY = re.compile(r"(?i:\b(?:happy|glad|pleased|delighted)\s+to\s+(?:help|assist|answer|be\s+of|oblige)\b"
                       r"|\bglad\s+you\s+asked\b)")
_NEGATED_MORE = re.compile(r"(?i:\b(?:anything\s+but|far\s+from|rather\s+than|instead\s+of|other\s+than|hardly|"
                           r"barely)\s+(?:\w+\s+)?|\b(?:rejected|dispreferred|loser|worse|worst|not\s+preferred|"
                           r"eliminated)\s*[:=\-]\s*(?:\w+\s*)?)$")
# a supplied label the reply reports ("the reference label is happy", "German, according to the label")
_SUPPLIED = (r"(?:reference|supplied|given|provided|suggested|proposed|original|attached|existing|annotated|stated|"
             r"ground[-\s]truth|expected|claimed)")
_LABEL_SAYS = (rf"(?i:(?:\b(?:the|a|this|its|that)\s+(?:{_SUPPLIED}\s+)?(?:label|annotation|tag|metadata)\s*(?:(?:is|"
               r"was|says|said|reads|suggests|claims|states|of)\b\s*|[:=]\s*)?|\baccording\s+to\s+the\s+(?:label|"
               r"annotation|metadata|reference)\s*[,:]?\s*)[\"']?\s*)")
_PER_LABEL = (rf"(?i:[\"']?\s*,?\s*\(?\s*(?:according\s+to|as\s+per|per|as\s+in|from)\s+the\s+(?:{_SUPPLIED}\s+)?"
              r"(?:label|annotation|reference)\)?)")
_AGREE = re.compile(r"(?i:\b(?:i\s+agree|agreed|(?:that'?s|that\s+is|it'?s|it\s+is|label\s+is)\s+(?:right|correct|"
                    r"accurate)|correct|confirm(?:ed)?|(?:it|that)\s+matches)\b)")
_DISAGREE = re.compile(r"(?i:\bdisagree|\b(?:not|n't|never)\s+(?:\w+\s+)?(?:right|correct|accurate|agree|match)|"
                       r"\b(?:wrong|incorrect|inaccurate|mistaken)\b)")
_STRUCTURED_KEYS = ("final_answer", "answer", "choice", "verdict", "label", "prediction", "preference", "preferred",
                    "winner", "better", "option", "selection", "result", "emotion", "language", "output")
_BRACKETED = re.compile(r"\[\[\s*([^\[\]\n]{1,40}?)\s*\]\]|\\boxed\{\s*(?:\\text\{)?\s*([^{}\n]{1,40}?)\s*\}?\s*\}|"
                        r"<(answer|choice|verdict|label|final_answer)>\s*([^<\n]{1,40}?)\s*</\3>", re.I)


def _sentence_of(text: str, start: int) -> tuple[int, int]:
    """Start and end of the sentence (or line) around ``start``."""
    left = max(text.rfind(c, 0, start) for c in ".!?;\n") + 1
    ends = [i for i in (text.find(c, start) for c in ".!?;\n") if i >= 0]
    return left, min(ends) + 1 if ends else len(text)


def _void(text: str, start: int) -> str | None:
    """Why a choice at ``start`` is no commitment (``hedged``, ``negated``), or None."""
    left, end = _sentence_of(text, start)
    before = text[left:start]
    if text[left:end].rstrip().endswith("?") or _HYPOTHETICAL.search(before) or _MAYBE_AFTER.match(text, start, end):
        return "hedged"
    return "negated" if _NEGATED_CLAIM.search(before) else None


def _commitment(text: str, spans: list[tuple[int, int, str]]) -> Reading | None:
    """The option of the reply's final commitment among the explicit choices ``spans``, or why there is none; None
    when there are no choices at all (the caller looks at bare mentions)."""
    if not spans:
        return None
    voided = [_void(text, s[0]) for s in spans]
    live = [s for s, why in zip(spans, voided, strict=True) if why is None]
    if not live:
        return Reading(None, "negated" if "negated" in voided else "hedged")
    start, end, option = live[-1]
    if _REVERSAL.search(text[end:]):
        return Reading(None, "reversed")  # "Description A is better. Wait, no: B is more faithful"
    if _SECOND_THOUGHT.search(text[end:]):
        return Reading(None, "hedged")  # "A... or maybe B."
    final = _FINAL.search(text[:start]) or _closing(text, start, end)
    for s in live[:-1]:
        if s[2].lower() != option.lower() and not final and not _REVERSAL.search(text[s[1]:start]):
            return Reading(None, "conflict")  # "A is better. B is better."
    return Reading(option)


def _closing_choice(text: str) -> list[tuple[int, int, str]]:
    """An option after a comma that ends a deliberation ("... Weighing both, B."), unless its sentence turns on a
    reversal ("I would have said A, but after listening again, B." stays open)."""
    m = re.search(r"\w\s*(?:,|\s-+)\s*" + _LETTER_REF + r"(?=[^\w]*$)", text)
    if m is None or _REVERSAL.search(text[_sentence_of(text, m.start(1))[0]: m.start(1)]):
        return []
    return [(m.start(1), m.end(1), m.group(1))]


def _closing(text: str, start: int, end: int) -> bool:
    """The choice closes the reply on a short sentence of its own ("... weighing both. B."): a final answer."""
    left, _ = _sentence_of(text, start)
    return not re.search(r"\w", text[end:]) and len(re.findall(r"\w+", text[left:start])) <= 3


def _no_choice(text: str, named: set[str], negated: bool) -> Reading:
    """Why a reply without an explicit choice names no option."""
    if len(named) > 1:
        return Reading(None, "conflict")
    if _UNSURE.search(text) or _MAYBE.search(text):
        return Reading(None, "hedged")
    if _TIE.search(text):
        return Reading(None, "tie")
    return Reading(None, "negated" if negated else "none")


def _sentence_choices(text: str, ref: str) -> list[tuple[int, int, str]]:
    """Sentences (or lines) that are only the option, possibly hedged: "B.", "I think clip B.", "Answer: sad"."""
    bare = re.compile(rf"\W*(?i:{_HEDGE}\W+)*{ref}[\s.,:;!?)\]\"'*_~-]*")  # punctuation only: "B: ★★☆" is a score
    found = []
    for sentence in _SENTENCE.finditer(text):
        m = bare.fullmatch(sentence.group())
        if m:
            found.append((sentence.start() + m.start(1), sentence.start() + m.end(1), m.group(1)))
    return found


def _negated(before: str) -> bool:
    return bool(_NEGATED.search(before) or _NEGATED_MORE.search(before))


def _excluded(text: str, start: int, end: int, coord_ref: str) -> bool:
    """A negated or coordinated mention ("not A", "A or B", "neither A nor B", "happy/sad") names no choice."""
    before, after = text[:start], text[end:]
    if _negated(before):
        return True
    joint = r"(?:[/&]|(?i:\b(?:or|and|nor|vs\.?|versus|between|either|neither|both)\b))"
    listed = re.search(rf"{coord_ref}\)?\s*,\s*\(?$", before)  # "happy, sad" but not "Not sad, happy"
    if re.search(rf"{joint}\s*(?:(?i:{_SLOT})\s*)?\(?$", before) or (listed and not _negated(before[:listed.start()])):
        return True
    return bool(re.match(rf"\)?\s*(?:[/&,]|(?i:(?:or|and|nor|vs\.?|versus)\b))\s*{coord_ref}", after))


def _choices(text: str, patterns: list[re.Pattern], ref: str, coord_ref: str,
             extra: Iterable[tuple[int, int, str]] = ()) -> list[tuple[int, int, str]]:
    """The explicit choices ``(start, end, option)`` in order, negated and coordinated mentions left out."""
    spans = {(m.start(1), m.end(1), m.group(1)) for p in patterns for m in p.finditer(text)}
    spans |= set(_sentence_choices(text, ref)) | set(extra)
    return sorted(s for s in spans if not _excluded(text, s[0], s[1], coord_ref))


def _read_letter(text: str, question: str | None) -> Reading:
    coord = rf"(?:(?i:{_SLOT})\s*)?\(?\b[AB]\b"
    patterns = [re.compile(_AB_CUE + _LETTER_REF), re.compile(_AB_VERB + _LETTER_REF),
                re.compile(_INSTEAD + _LETTER_REF + rf"(?:{_END}|(?=\s+-\s))"),
                re.compile(r"(?i:\b(?:response|output|result)\s*[:=]\s*)" + _LETTER_REF),
                re.compile(_CONCLUDE + _LETTER_REF + _END), re.compile(_ITS + _LETTER_REF + _END),
                re.compile(_LETTER_REF + _AB_GOOD)]
    # "A: ..." and "A - ..." lead only when not the first of per-clip headers ("A: noisy. B: clean.", "A - poor\nB -")
    headers = set(re.findall(rf"(?:^|\n|[.;,]\s+)\W*(?:(?i:{_SLOT})\s*)?\(?\b([AB])\b\)?\s*(?::|-\s)", text))
    dash = r"|[-\u2013]\s" if len(headers) < 2 else ""
    patterns.append(re.compile(rf"^\W*(?:(?i:{_SLOT})\s*)?\(?\b([AB])\b\)?(?=\s*(?:[.)!;]{dash}|,{_NOT_CLAUSE}|$))"))
    if len(headers) < 2:
        patterns.append(re.compile(r"^\W*\(?\b([AB])\b\)?(?=\s*:)"))
    extra = _question_choices(text, question) + _closing_choice(text)
    reading = _commitment(text, _choices(text, patterns, _LETTER_REF, coord, extra))
    if reading is not None:
        return reading
    named = {m.group(1) for m in re.finditer(_LETTER_REF, text) if not _excluded(text, m.start(1), m.end(1), coord)}
    return _no_choice(text, named, any(_negated(text[:m.start(1)]) for m in re.finditer(_LETTER_REF, text)))


def _other_labels(options: list[str]) -> re.Pattern | None:
    """Labels of the options' kind that are not options ("Cantonese" where the options hold Mandarin Chinese only),
    by forms no option claims."""
    lowered = {o.lower() for o in options}
    kind = next((k for k in _KINDS if lowered & k), set())
    claimed = set(_label_forms(options))
    forms = {f for label in kind - lowered for f in (label, *_ALIASES.get(label, [])) if f.lower() not in claimed}
    if not forms:
        return None
    return re.compile("|".join(rf"(?<!\w){re.escape(f)}(?!\w)" for f in sorted(forms, key=len, reverse=True)), re.I)


def _read_label(text: str, options: list[str]) -> Reading:
    by_lower = {o.lower(): o for o in options}
    lowered = text.lower().strip(" \t\n.\"'`*:!")
    if lowered in by_lower:
        return Reading(by_lower[lowered])
    alternation = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    ref = rf"(?i:(?<!\w)({alternation})(?!\w))"
    coord = rf"(?i:(?<!\w)(?:{alternation})(?!\w))"
    # the supplied label, only reported, is set aside ("the reference label is happy, but I hear sadness")
    supplied = {m.group(1).lower() for p in (_LABEL_SAYS + ref, ref + _PER_LABEL) for m in re.finditer(p, text)}
    text = re.sub(_LABEL_SAYS + ref, " the label ", text)
    text = re.sub(ref + _PER_LABEL, " the label ", text)
    # "sad: ..." leads only when it is not the first of per-label headers ("Happy: maybe. Surprised: maybe.")
    headers = {h.lower() for h in re.findall(rf"(?:^|\n|[.;,]\s+)\W*{ref}\s*:", text)}
    lead = r"[.)!;:]" if len(headers) < 2 else r"[.)!;]"
    patterns = [re.compile(_LABEL_CUE + ref), re.compile(_LABEL_VERB + ref), re.compile(_CONCLUDE + ref + _END),
                re.compile(_INSTEAD + ref + _END), re.compile(_ITS + ref + _END),
                re.compile(rf"^\W*{ref}(?=\s*(?:{lead}|[-\u2013]\s|,{_NOT_CLAUSE}|$))")]
    reading = _commitment(text, _choices(text, patterns, ref, coord))
    if reading is not None and not (reading.option is None and _ASKED_NO.search(text)):
        return Reading(by_lower[reading.option.lower()]) if reading.option else reading
    mentions = list(re.finditer(ref, text))
    if any(_excluded(text, m.start(1), m.end(1), coord) and not _negated(text[:m.start(1)]) for m in mentions):
        return Reading(None, "conflict")  # "happy/sad", "angry or sad": more than one option offered
    doubted = [m for m in mentions if _void(text, m.start(1)) == "hedged"]
    mentions = [m for m in mentions if m not in doubted or _UNSURE.search(text)]
    named = {m.group(1).lower() for m in mentions if not _negated(text[:m.start(1)])}
    if doubted and any(_UNCOMMITTED.search(text[slice(*_sentence_of(text, m.start(1)))]) for m in mentions
                       if m.group(1).lower() in named - {d.group(1).lower() for d in doubted}):
        return Reading(None, "hedged")  # "Possibly Italian, but Spanish is almost as likely"
    others = _other_labels(options)
    if others is not None and others.search(text):
        named.add("another label")  # "Chinese (Cantonese)": a label that is not an option is named too
    taken_back = bool(mentions) and _REVERSAL.search(text[mentions[-1].end(1):])
    yes_no = set(by_lower) == {"yes", "no"}  # "there is no barking" mentions "no" but answers nothing
    if len(named) == 1 and mentions and not _UNSURE.search(text) and not taken_back and not yes_no:
        return Reading(by_lower[named.pop()])
    if not named and len(supplied) == 1:
        if _AGREE.search(text) and not _DISAGREE.search(text):
            return Reading(by_lower[supplied.pop()])  # "The label says angry. I agree."
        return Reading(None, "label")
    return _no_choice(text, named, any(_negated(text[:m.start(1)]) for m in mentions))


def _json_values(text: str, options: list[str]) -> tuple[list[str], Reading | None]:
    """A JSON object's answer fields (as models write JSON: single quotes, a trailing comma), or the reading of its
    per-option scores; a key repeated with another value is a ``conflict``."""
    brace = text.find("{"), text.rfind("}")
    if not -1 < brace[0] < brace[1]:
        return [], None
    square = text.find("["), text.rfind("]")
    if -1 < square[0] < brace[0] and brace[1] < square[1]:  # a list of per-option objects
        listed, repeated = loads_lenient(text[square[0]: square[1] + 1])
        per = per_option(listed) if isinstance(listed, list) and not repeated else None
        if per is not None:
            scored = json_scores(per, options)
            return [], None if scored is None else Reading(*scored)
    obj, repeated = loads_lenient(text[brace[0]: brace[1] + 1])
    if not isinstance(obj, dict):
        return [], None
    if repeated:
        return [], Reading(None, "conflict")
    keys = {str(k).lower().replace(" ", "_"): v for k, v in obj.items()}
    values = [str(keys[k]) for k in _STRUCTURED_KEYS if isinstance(keys.get(k), (str, int)) and
              not isinstance(keys.get(k), bool)]
    scored = json_scores(obj, options)
    if scored is None:
        return values, None
    option, reason = scored
    return values, Reading(option, reason)


def _structured(text: str, options: list[str]) -> Reading | None:
    """A JSON object's answer field or per-option scores, ``[[B]]`` or ``\\boxed{B}``, read exactly; None when the
    reply has none."""
    values, scored = _json_values(text, options)
    if scored is not None and scored.reason == "conflict":
        return scored
    values += [m.group(1) or m.group(2) or m.group(4) for m in _BRACKETED.finditer(text)
               if not re.match(r"\s*[:=]\s*\d", text[m.end():])]  # "[[A]]: 7" is a score, not an answer
    if not values:
        return scored
    readings = [] if scored is None else [scored]
    for value in values:
        if value.strip().upper() == "C" and sorted(options) == ["A", "B"] or _TIE.fullmatch(value.strip()):
            readings.append(Reading(None, "tie"))  # MT-Bench's [[C]]
        else:
            readings.append(_read_text(value, options))
    chosen = {r.option for r in readings if r.option is not None}
    if len(chosen) > 1 or (chosen and scored is not None and scored.reason == "tie"):
        return Reading(None, "conflict")
    return next((r for r in readings if r.option is not None), readings[-1])


def _english(raw: str) -> tuple[str, str]:
    """``(language, English gloss)`` of a reply."""
    text = _MARKUP.sub("", prepare(raw)).strip()
    lang = language(text)
    if lang in ("fr", "it"):
        # "l'extrait" -> "l' extrait"
        text = re.sub(r"(?i:\b([cdjlmnst]|qu|dell|all|nell|sull|un)'(?=\w))", r"\1' ", text)
    text = particles_dropped(text, lang)
    return lang, CHOICE_GLOSSES[lang](text) if lang in CHOICE_GLOSSES else text


def _combined(judgement: Judgement, rules: Reading) -> Reading:
    """The reply's scores or comparisons (:func:`~.scored_options.judged`) and what the rules read in the rest: a
    verdict must agree with the scores, and never pick the option described as the worse; doubt in the rest wins
    over them."""
    option, reason, _, worse = judgement
    if rules.option is not None and rules.option == worse:
        return Reading(None, "conflict")  # "Clip A: noisy (hum)\nClip B: clean\n\nAnswer: A"
    if option is None and reason is None:
        return rules
    if rules.option is not None:  # a verdict breaks a tie of the scores; it may not contradict their winner
        return rules if rules.option == option or reason in ("tie", "hedged") else Reading(None, "conflict")
    if rules.reason in ("none", "empty", "tie"):
        return Reading(option, reason)
    return rules


def _read_text(raw: str, options: list[str], question: str | None = None) -> Reading:
    lang, text = _english(_language_codes(prepare(raw).strip(), options))
    if lang not in CHOICE_GLOSSES and lang != "en":
        return Reading(None, "language")
    if sorted(options) in (["A", "B"], ["1", "2"]):
        digits = sorted(options) == ["1", "2"]
        text = re.sub(r"\[\[\s*([AB12])\s*\]\](?=\s*[:=])", r"\1", text)  # rubric scores: "[[A]]: 7 [[B]]: 3"
        # a Cyrillic or Greek capital that looks like the slot letter, standing alone ("Ответ: А")
        text = re.sub(r"(?<!\w)([\u0410\u0391]|[\u0412\u0392])(?=\s*(?:[.!,;)]|$))",
                      lambda m: "A" if m.group(1) in "\u0410\u0391" else "B", text)
        if not digits and text.strip(" .!*`'\"") in ("a", "b"):  # the whole reply is the letter, in lower case
            text = text.strip(" .!*`'\"").upper()
        if not digits:  # "Choice: (b)", "answer: b"
            text = re.sub(r"\(([ab])\)|(?i:\b(?:answer|choice|verdict|pick|final)\s*[:=\-]\s*)([ab])"
                          r"(?=[^\w\n]*(?:\n|$))",
                          lambda m: m.group(0)[:-1].replace("(a", "(A").replace("(b", "(B") + m.group(0)[-1].upper()
                          if m.group(2) else f"({m.group(1).upper()})", text)
        text = _ordinals(_ranked_list(text), digits)
        judgement = judged(text, ["A", "B"], _SCORED_SLOT, question_of(question))
        reading = _combined(judgement, _read_letter(judgement.rest, question))
        if reading.option is not None and digits:
            return Reading({"A": "1", "B": "2"}[reading.option])
        return reading
    text = _canonical_labels(_COURTESY.sub(" ", text), options)
    alternation = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    judgement = judged(text, options, rf"(?i:(?<!\w)({alternation})(?!\w))", question_of(question))
    return _combined(judgement, _read_label(judgement.rest, options))


_RANKED = re.compile(r"(?im)^[^\n]*\b(?:rank(?:ing|ed)?|order(?:ed)?|best\s+first|most\s+\w+\s+first)\b[^\n]*\n+"
                     r"\s*(?:1[.)]|#1[.):]?|first[.):])\s*(?P<first>[^\n]{1,40})\n\s*(?:2[.)]|#2[.):]?|second[.):])"
                     r"\s*(?P<second>[^\n]{1,40})")
_LIST_MARKER = re.compile(r"(?m)^(\s*)(?:\d{1,2}[.)]|[-*•])\s+(?=\S)")


def _ranked_list(text: str) -> str:
    """A ranked list's first item as the answer ("Ranking:\n1. Audio 2\n2. Audio 1" -> "Answer: Audio 2."); the
    markers of every other list taken off ("1. Audio 2" names no option 1)."""
    text = _RANKED.sub(lambda m: f"Answer: {m.group('first').strip()}.", text)
    return _LIST_MARKER.sub(r"\1", text)


# a slot as scores name it: "A", "clip B", and a bare 1 or 2 that heads its score ("1: 4/5", "2) 3/5")
_SCORED_SLOT = rf"(?:(?i:{_SLOT})\s*)?\(?(\b[AB]\b|(?<![\w.,/])[12](?=\s*(?:[:=)|]|→|->)))\)?"


def read_answer(raw: object, options: list[str], question: str | None = None,
                reasoning: str | None = None) -> Reading:
    """The option a free-form reply names, or None and why not (see the module docstring and :data:`REASONS`).
    ``question``: the item's prompt, of which only the question sentence is read (:func:`question_of`);
    ``reasoning``: a trace the server returned apart from the reply (``reasoning_content``): never read as the
    answer, only to say ``reasoning-only`` when it alone names an option. A trace inside the reply
    (``<think>...</think>``) is split off the same way (:func:`~.reasoning.split_reasoning`)."""
    text = "" if raw is None or (isinstance(raw, float) and raw != raw) else str(raw)
    if not options:
        return Reading(None, "none")
    split = split_reasoning(text)
    traces = [t for t in (split.reasoning, reasoning) if t and t.strip()]
    if split.cut or (traces and not split.answer.strip()):
        return Reading(None, "reasoning-only")  # deliberation only, cut off or never concluded
    reading = _read_visible(split.answer, options, question)
    if reading.option is None and reading.reason in ("none", "empty") and any(
            _read_visible(t, options, question).option for t in traces):
        return Reading(None, "reasoning-only")
    return reading


def _read_visible(text: str, options: list[str], question: str | None) -> Reading:
    if not text.strip():
        return Reading(None, "empty")
    if unreadable(text):
        return Reading(None, "noise")
    return _structured(text, options) or _read_text(text, options, question)


def parse_answer(raw: str, options: list[str], question: str | None = None) -> str | None:
    """The option a free-form reply names, or None (:func:`read_answer` says why)."""
    return read_answer(raw, options, question).option


def agreeing_probs(raw: object, label: str | None, probs: dict | None,
                   sampled: bool = False) -> tuple[dict | None, str | None]:
    """The option probabilities an answer may be read by, and why not when they are dropped.

    Probabilities and text must agree; the text wins. They count when the runner scored the options without writing
    (empty text) or when the text names the option they favour. When the text names no option (``unread``: "A or B?
    Neither is accurate.") they are dropped: a text-less probability is never read as the model's answer. When it
    names another one (``conflict``) they are dropped under greedy decoding, where the text is the model's most
    likely answer, so a disagreement is a misreading; a ``sampled`` text is one draw from them, and they are its
    distribution (dropping only the draws that disagree would bias every rate read from them).
    """
    if not probs:
        return None, None
    text = "" if raw is None or (isinstance(raw, float) and raw != raw) else str(raw).strip()
    top = max(probs, key=lambda o: probs[o])
    if not text:  # the runner scored the options without writing
        return probs, None
    if label is None:
        return None, f"unread: the text names no option; the probabilities favour {top}"
    if not sampled and str(top).casefold() != str(label).casefold():
        return None, f"conflict: the text names {label}; the probabilities favour {top}"
    return probs, None
