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

The pieces live beside it, one idea each: :mod:`~.reasoning` (a trace set apart), :mod:`~.scored_options` (per-option
scores, marks and comparisons), :mod:`~.attribute_comparisons` (comparisons on the question's attribute),
:mod:`~.slot_references` (ordinals, numbers and rankings as slots), :mod:`~.yes_no` (yes/no answers),
:mod:`~.commitment` (the doubt rules and the final commitment), :mod:`~.label_forms` (a label's aliases, stems and
codes) and :mod:`~.choice_glosses` (the languages glossed).
"""

from __future__ import annotations

import re

from omniaudit.answer_language import language, prepare, unreadable
from omniaudit.runners.choice_glosses import CHOICE_GLOSSES, LATIN_GLOSS
from omniaudit.runners.commitment import (
    ASKED_NO,
    CONCLUDE,
    END,
    INSTEAD,
    ITS,
    NOT_CLAUSE,
    REVERSAL,
    SLOT,
    TIE,
    UNCOMMITTED,
    UNSURE,
    Reading,
    choices,
    commitment,
    excluded,
    negated,
    no_choice,
    sentence_of,
    void,
)
from omniaudit.runners.commitment import REASONS as REASONS  # re-exported: why a reply is left unread
from omniaudit.runners.label_forms import canonical_labels, language_codes, other_labels
from omniaudit.runners.reasoning import split_reasoning
from omniaudit.runners.scored_options import Judgement, json_scores, judged, loads_lenient, per_option
from omniaudit.runners.slot_references import slot_references
from omniaudit.runners.word_order import denied_at_clause_end, in_gloss_order
from omniaudit.runners.yes_no import read_yes_no

_MARKUP = re.compile(r"[*`#]|(?<!\w)_+|_+(?!\w)")  # emphasis marks; underscores inside words ("audio_described") stay
_LETTER_REF = rf"(?:(?i:{SLOT})\s*)?\(?\b([AB])\b\)?"  # the letter is case-sensitive: "a bit" is not slot A
_FORCED = (r"if\s+(?:i'?m\s+|i\s+am\s+|i\s+was\s+)?forced(?:\s+to\s+(?:choose|pick|answer|decide))?|"
           r"if\s+i\s+(?:had|have|must|need)\s+to\s+(?:choose|pick|say|answer|decide)|forced\s+to\s+choose|"
           r"leaning\s+(?:towards?|to)|i'?d\s+lean\s+(?:towards?|to)")
_AB_CUE = (r"(?i:\b(?:answer|choice|verdict|decision|pick|selection|preference|winner|win\s+for|"
           r"(?:ans|letter)(?=\s*:)|"
           rf"(?:better|preferred)\s+(?:one|clip|option|candidate|sample|recording)|(?:preferred|best|better|final)"
           r"(?=\s*[:=])|"
           rf"{_FORCED})\b(?:\s+(?:is|would\s+be|"
           r"will\s+be|goes\s+to))?(?:\s+for)?\s*[:=\-\u2013,]?\s*)")
_AB_VERB = (r"(?i:\b(?:chang(?:e|ed|ing)\s+(?:my\s+(?:answer|choice|pick|mind)\s+)?to|switch(?:ed|ing)?\s+to|"
            r"choose|chose|choosing|pick|picked|picking|select|selected|selecting|prefer|preferred|"
            r"go\s+with|going\s+with|went\s+with|opt\s+for|vote\s+for|recommend|i'?ll\s+say|i\s+will\s+say|i'?d\s+say|i\s+would\s+say|settle(?:d)?\s+on)\s+)")
_AB_GOOD = (r"(?i:\s+(?:wins\b|edges\s+it(?:\s+out)?\b|(?:aligns|fits|matches|works)\s+(?:(?:much|slightly|clearly|"
            r"far|a\s+bit)\s+)?better\b|(?:is|was|sounds|seems|would\s+be)\s+(?:(?:clearly|much|slightly|definitely|"
            r"somewhat|far|overall|the|a\s+bit|a)\s+)*(?:better|best|preferred|preferable|superior|the\s+winner|"
            r"(?:my|the)\s+(?:choice|pick|answer)|(?:right|correct)\s+one|correct)\b))")
_LABEL_CUE = (r"(?i:\b(?:answer|label|verdict|choice|option|prediction|classification|category|class|emotion|language|"
              rf"{_FORCED})\b(?:\s+(?:is|would\s+be|will\s+be))?\s*[:=\-\u2013,]?\s*)")
_LABEL_VERB = (r"(?i:\b(?:choose|chose|pick|picked|select|selected|go\s+with|going\s+with|i'?ll\s+say|i\s+will\s+say|"
               r"(?:classify|label|identify|classified|labelled|labeled|identified)(?:\s+(?:it|this|the\s+\w+))?"
               r"\s+as)\s+)")

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
_NOISES = {"hiss", "hum", "static", "crackle", "crackling", "buzz", "buzzing", "rumble", "noises", "interference"}


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
    if "noise" in asked:  # the kinds of noise a reply names ("clip B has less hiss")
        asked |= _NOISES
    found = []
    for m in _PREDICATE.finditer(text):
        words = [w for w in re.findall(r"[a-z']+", m.group("pred").lower()) if w not in _FILLER]
        comparative = [w for w in words if w in _COMPARATIVE or (w.endswith("er") and len(w) > 4
                                                                   and w not in _NOT_COMPARATIVE)]
        if words and comparative and all(w in asked for w in words):
            found.append((m.start(1), m.end(1), m.group(1)))
    return found


# ------------------------------------------------------------------------------------------------- label kinds


# ---------------------------------------------------------------------------------------------------- doubt


_COURTESY = re.compile(r"(?i:\b(?:happy|glad|pleased|delighted)\s+to\s+(?:help|assist|answer|be\s+of|oblige)\b"
                       r"|\bglad\s+you\s+asked\b)")
# a supplied label the reply reports ("the reference label is happy", "German, according to the label")
_SUPPLIED = (r"(?:reference|supplied|given|provided|suggested|proposed|original|attached|existing|annotated|stated|"
             r"ground[-\s]truth|expected|claimed)")
_LABEL_SAYS = (rf"(?i:(?:\b(?:the|a|this|its|that)\s+(?:{_SUPPLIED}\s+)?(?:label|annotation|tag|metadata)"
               rf"(?:\s+{_SUPPLIED})?\s*(?:(?:is|"
               r"was|says|said|reads|suggests|claims|states|of)\b\s*|[:=]\s*)?|\baccording\s+to\s+the\s+(?:label|"
               r"annotation|metadata|reference)\s*[,:]?\s*)[\"']?\s*)")
_PER_LABEL = (rf"(?i:[\"']?\s*,?\s*\(?\s*(?:according\s+to|as\s+per|per|as\s+in|from)\s+the\s+(?:{_SUPPLIED}\s+)?"
              r"(?:label|annotation|reference)\)?)")
# the label named as the answer's source before it ("Based on the provided label: happy.")
_CITED = (rf"(?i:\b(?:based\s+on|going\s+by|following|as\s+per|per)\s+the\s+(?:{_SUPPLIED}\s+)?(?:label|"
          r"annotation|reference(?:\s+label)?)\s*[:,]?\s*)[\"']?\s*")
_AGREE = re.compile(r"(?i:\b(?:i\s+agree|agreed|(?:that'?s|that\s+is|it'?s|it\s+is|label\s+is)\s+(?:right|correct|"
                    r"accurate)|correct|confirm(?:ed)?|(?:it|that)\s+matches)\b)")
_DISAGREE = re.compile(r"(?i:\bdisagree|\b(?:not|n't|never)\s+(?:\w+\s+)?(?:right|correct|accurate|agree|match)|"
                       r"\b(?:wrong|incorrect|inaccurate|mistaken)\b)")
_STRUCTURED_KEYS = ("final_answer", "answer", "choice", "verdict", "label", "prediction", "preference", "preferred",
                    "more_natural", "most_natural", "cleaner", "cleanest", "more_faithful", "most_faithful",
                    "present", "detected", "audible",
                    "winner", "better", "option", "selection", "result", "emotion", "language", "output")
_BRACKETED = re.compile(r"\[\[\s*([^\[\]\n]{1,40}?)\s*\]\]|\\boxed\{\s*(?:\\text\{)?\s*([^{}\n]{1,40}?)\s*\}?\s*\}|"
                        r"<(answer|choice|verdict|label|final_answer)>\s*([^<\n]{1,40}?)\s*</\3>", re.I)


def _closing_choice(text: str) -> list[tuple[int, int, str]]:
    """An option after a comma that ends a deliberation ("... Weighing both, B."), unless its sentence turns on a
    reversal ("I would have said A, but after listening again, B." stays open)."""
    m = re.search(r"\w\s*(?:,|\s-+|\s(?i:honestly|frankly|ultimately|truly|really))\s*" + _LETTER_REF
                  + r"(?=[^\w]*$)", text)
    if m is None or REVERSAL.search(text[sentence_of(text, m.start(1))[0]: m.start(1)]):
        return []
    return [(m.start(1), m.end(1), m.group(1))]


def _the_other_of_the_worse(text: str) -> list[tuple[int, int, str]]:
    """"B is worse." (nothing compared after it): a choice of the other slot, where the worse one is named."""
    return [(m.start(1), m.end(1), "A" if m.group(1) == "B" else "B") for m in re.finditer(
        _LETTER_REF + r"\s+(?i:is|sounds|seems)\s+(?i:(?:clearly|much|slightly|definitely|far)\s+)?(?i:worse|inferior)"
        r"\b(?!\s+(?i:than|in|at|for|on)\b)", text)]


def _per_condition(text: str, ref: str) -> bool:
    """Two options, each the answer under its own condition ("If you mean prosody, A; if you mean voice quality,
    B."): no overall choice."""
    return len({m.group(1).lower() for m in re.finditer(
        r"(?i:\b(?:if|when|for)\b)[^.;!?\n]{1,80}?,\s*(?i:(?:then|it'?s|go\s+with|choose|pick)\s+)?" + ref,
        text)}) > 1


def _read_letter(text: str, question: str | None) -> Reading:
    coord = rf"(?:(?i:{SLOT})\s*)?\(?\b[AB]\b"
    patterns = [re.compile(_AB_CUE + _LETTER_REF), re.compile(_AB_VERB + _LETTER_REF),
                re.compile(INSTEAD + _LETTER_REF + rf"(?:{END}|(?=\s+-\s))"),
                re.compile(r"(?i:\b(?:response|output|result)\s*[:=]\s*)" + _LETTER_REF),
                re.compile(CONCLUDE + _LETTER_REF + END), re.compile(ITS + _LETTER_REF + END),
                re.compile(_LETTER_REF + r"\W+(?i:that'?s|that\s+is|this\s+is)\s+my\s+(?:final\s+)?"
                           r"(?i:answer|choice|pick)"),
                re.compile(rf"(?i:\bnot\s+)(?:(?i:{SLOT})\s*)?\(?\b[AB]\b\)?\s*[,;]\s*(?i:but\s+(?:rather\s+)?|rather\s+|"
                           r"it'?s\s+|it\s+is\s+|is\s+)" + _LETTER_REF + END),
                re.compile(_LETTER_REF + _AB_GOOD)]
    # "A: ...", "A - ..." and "A) ..." lead only when not the first of per-clip headers or an enumeration ("A: noisy.
    # B: clean.", "A - poor\nB -", "A) happy B) sad")
    headers = set(re.findall(rf"(?:^|\n|[.;,]\s+|\s\s)\W*(?:(?i:{SLOT})\s*)?\(?\b([AB])\b\)?\s*(?::|-\s)", text))
    headers |= set(re.findall(r"(?:^|\s)\b([AB])\)\s", text))
    dash, close = (r"|[-\u2013]\s", r"[.)!;]") if len(headers) < 2 else ("", r"[.!;]")
    patterns.append(re.compile(rf"^\W*(?:(?i:definitely|clearly|certainly|obviously|surely)\s+)?(?:(?i:{SLOT})\s*)?"
                               rf"\(?\b([AB])\b\)?(?=\s*(?:{close}{dash}|,{NOT_CLAUSE}|$))"))
    if len(headers) < 2:
        patterns.append(re.compile(r"^\W*\(?\b([AB])\b\)?(?=\s*:)"))
    # each option preferred on its own aspect ("A for clarity but B for faithfulness"): no overall choice
    aspects = {m.group(1) for m in re.finditer(_LETTER_REF + r"\s+(?i:for|on|in\s+terms\s+of)\s+(?!(?:the|a|an|me|"
                                               r"us|sure|now|once)\b)[a-z]+", text)}
    if len(aspects) > 1 or _per_condition(text, _LETTER_REF):
        return Reading(None, "conflict")
    extra = _question_choices(text, question) + _closing_choice(text) + _the_other_of_the_worse(text)
    reading = commitment(text, choices(text, patterns, _LETTER_REF, coord, extra))
    if reading is not None:
        return reading
    named = {m.group(1) for m in re.finditer(_LETTER_REF, text) if not excluded(text, m.start(1), m.end(1), coord)}
    reading = no_choice(text, named, any(negated(text[:m.start(1)]) for m in re.finditer(_LETTER_REF, text)))
    return Reading(None, _MENTIONS) if reading.reason == "conflict" else reading


_MENTIONS = "mentions"  # both options named and neither chosen: a "conflict", unless a comparison decides


def _read_label(text: str, options: list[str]) -> Reading:
    by_lower = {o.lower(): o for o in options}
    lowered = text.lower().strip(" \t\n.\"'`*:!")
    if lowered in by_lower:
        return Reading(by_lower[lowered])
    alternation = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    ref = rf"(?i:(?<!\w)({alternation})(?!\w))"
    coord = rf"(?i:(?<!\w)(?:{alternation})(?!\w))"
    # the supplied label, only reported, is set aside ("the reference label is happy, but I hear sadness"); given
    # as the answer with the label for its source ("happy (as per the reference label)"), it is the answer
    cited = {m.group(1).lower() for p in (ref + _PER_LABEL, _CITED + ref) for m in re.finditer(p, text)}
    supplied = {m.group(1).lower() for m in re.finditer(_LABEL_SAYS + ref, text)} | cited
    for pattern in (_CITED + ref, _LABEL_SAYS + ref, ref + _PER_LABEL):
        text = re.sub(pattern, " the label ", text)
    # "sad: ..." leads only when it is not the first of per-label headers ("Happy: maybe. Surprised: maybe.")
    headers = {h.lower() for h in re.findall(rf"(?:^|\n|[.;,]\s+)\W*{ref}\s*:", text)}
    lead = r"[.)!;:]" if len(headers) < 2 else r"[.)!;]"
    patterns = [re.compile(_LABEL_CUE + ref), re.compile(_LABEL_VERB + ref), re.compile(CONCLUDE + ref + END),
                re.compile(INSTEAD + ref + END), re.compile(ITS + ref + END),
                re.compile(rf"^\W*{ref}(?=\s*(?:{lead}|[-\u2013]\s|,{NOT_CLAUSE}|$))")]
    if _per_condition(text, ref):
        return Reading(None, "conflict")
    reading = commitment(text, choices(text, patterns, ref, coord))
    if reading is not None and not (reading.option is None and ASKED_NO.search(text)):
        return Reading(by_lower[reading.option.lower()]) if reading.option else reading
    mentions = list(re.finditer(ref, text))
    if any(excluded(text, m.start(1), m.end(1), coord) and not negated(text[:m.start(1)]) for m in mentions):
        return Reading(None, "conflict")  # "happy/sad", "angry or sad": more than one option offered
    doubted = [m for m in mentions if void(text, m.start(1)) == "hedged"]
    mentions = [m for m in mentions if m not in doubted or UNSURE.search(text)]
    named = {m.group(1).lower() for m in mentions if not negated(text[:m.start(1)])}
    if doubted and any(UNCOMMITTED.search(text[slice(*sentence_of(text, m.start(1)))]) for m in mentions
                       if m.group(1).lower() in named - {d.group(1).lower() for d in doubted}):
        return Reading(None, "hedged")  # "Possibly Italian, but Spanish is almost as likely"
    others = other_labels(options)
    if others is not None and others.search(text):
        named.add("another label")  # "Chinese (Cantonese)": a label that is not an option is named too
    taken_back = bool(mentions) and REVERSAL.search(text[mentions[-1].end(1):])
    yes_no = set(by_lower) == {"yes", "no"}  # "there is no barking" mentions "no" but answers nothing
    if len(named) == 1 and mentions and not UNSURE.search(text) and not taken_back and not yes_no:
        return Reading(by_lower[named.pop()])
    if not named and len(supplied) == 1:
        if (_AGREE.search(text) or supplied == cited) and not _DISAGREE.search(text):
            return Reading(by_lower[supplied.pop()])  # "The label says angry. I agree.", "sad, per the label"
        return Reading(None, "label")
    return no_choice(text, named, any(negated(text[:m.start(1)]) for m in mentions))


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
    # "preferred_description", "better_clip", "chosen_option": the key says its value is the choice
    named = [k for k in keys if re.fullmatch(r"(?:preferred|better|best|chosen|selected|winning)_(?:clip|audio|"
                                             r"option|description|response|sample|recording|label|emotion|language|"
                                             r"one)", k)]
    values = [str(keys[k]) for k in (*_STRUCTURED_KEYS, *named) if isinstance(keys.get(k), (str, int)) and
              not isinstance(keys.get(k), bool)]
    if sorted(o.lower() for o in options) == ["no", "yes"]:  # {"speech_present": true}, {"answer": false}
        values += [("yes" if v else "no") for k, v in keys.items() if isinstance(v, bool) and re.fullmatch(
            r"(?:\w+_)?(?:present|detected|audible|heard)|is_\w+|has_\w+|answer|final_answer|result", k)]
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
        if value.strip().upper() == "C" and sorted(options) == ["A", "B"] or TIE.fullmatch(value.strip()):
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
    text = in_gloss_order(text, lang)
    if lang == "en":  # too short to tell: "Eindeutig A.", "Sicuramente la B.", "A, anzi B."
        return lang, LATIN_GLOSS(text)
    return lang, CHOICE_GLOSSES[lang](text) if lang in CHOICE_GLOSSES else text


def _combined(judgement: Judgement, rules: Reading) -> Reading:
    """The reply's scores or comparisons (:func:`~.scored_options.judged`) and what the rules read in the rest: a
    verdict must agree with the scores, and never pick the option described as the worse; doubt in the rest wins
    over them."""
    option, reason, _, worse = judgement
    # "A is flat. B is lively. So the more natural one is clip B."; not where the rest holds numbers, which may be
    # measurements that contradict the verdict ("A: SNR ~30 dB; B: SNR ~18 dB. So the cleaner one is B.")
    described = rules.reason == _MENTIONS and not re.search(r"\d", judgement.rest)
    rules = Reading(None, "conflict") if rules.reason == _MENTIONS else rules
    if rules.option is not None and rules.option == worse:
        return Reading(None, "conflict")  # "Clip A: noisy (hum)\nClip B: clean\n\nAnswer: A"
    if option is None and reason is None:
        return rules
    if rules.option is not None:  # a verdict breaks a tie of the scores; it may not contradict their winner
        return rules if rules.option == option or reason in ("tie", "hedged") else Reading(None, "conflict")
    if rules.reason in ("none", "empty", "tie") or described:
        return Reading(option, reason)
    return rules


def _read_text(raw: str, options: list[str], question: str | None = None) -> Reading:
    lang, text = _english(language_codes(prepare(raw).strip(), options))
    if lang not in CHOICE_GLOSSES and lang != "en":
        return Reading(None, "language")
    if _FOREIGN_TURN.search(raw) and not REVERSAL.search(text):  # a turn the gloss did not make English (the
        return Reading(None, "reversed")                           # language told wrong): never read across it
    yes_no_scores = re.search(r"(?i:\byes\s*[:=]\s*\d)", text) and re.search(r"(?i:\bno\s*[:=]\s*\d)", text)
    if sorted(o.lower() for o in options) == ["no", "yes"] and not yes_no_scores:  # "yes: 0.92, no: 0.08": scores
        said = read_yes_no(_MARKUP.sub("", prepare(raw)).strip(), text, lang)
        if said is not None:
            return Reading(next(o for o in options if o.lower() == said.option), None) if said.option else said
    if sorted(options) in (["A", "B"], ["1", "2"]):
        digits = sorted(options) == ["1", "2"]
        text = re.sub(r"\[\[\s*([AB12])\s*\]\](?=\s*[:=])", r"\1", text)  # rubric scores: "[[A]]: 7 [[B]]: 3"
        # a Cyrillic or Greek capital that looks like the slot letter, or the Russian second letter, standing alone
        # ("Ответ: А", "Ответ: Б")
        text = re.sub(r"(?<!\w)([\u0410\u0391]|[\u0411\u0412\u0392])(?=\s*(?:[.!,;)]|$))",
                      lambda m: "A" if m.group(1) in "\u0410\u0391" else "B", text)
        if not digits and text.strip(" .!*`'\"") in ("a", "b"):  # the whole reply is the letter, in lower case
            text = text.strip(" .!*`'\"").upper()
        if not digits:  # "Choice: (b)", "answer: b"
            text = re.sub(r"\(([ab])\)|(?i:\b(?:answer|ans|letter|choice|verdict|pick|final)\s*[:=\-]\s*)([ab])"
                          r"(?=[^\w\n]*(?:\n|$))",
                          lambda m: m.group(0)[:-1].replace("(a", "(A").replace("(b", "(B") + m.group(0)[-1].upper()
                          if m.group(2) else f"({m.group(1).upper()})", text)
        text = re.sub(r"(?<!\w)['\"‘’“”]([AB12])['\"‘’“”](?!\w)", r"\1", text)  # "Clip 'B'."
        text = re.sub(rf"(?<![\w.,/])([AB12])\s*\((?i:{SLOT})\s+\1\)", r"\1", text)  # "A (clip A)"
        text = re.sub(r"(?<![\w.,/])([AB12])\s*\(([^()\n\d?]{1,40})\)",  # "A (calm and content) is more faithful"
                      lambda m: m.group(0) if re.search(rf"\b[AB12]\b|{UNSURE.pattern}|\b(?i:not|or)\b", m.group(2))
                      else m.group(1), text)
        text = slot_references(text, digits)
        judgement = judged(text, ["A", "B"], _SCORED_SLOT, question_of(question))
        reading = _combined(judgement, _read_letter(judgement.rest, question))
        if reading.option is not None and digits:
            return Reading({"A": "1", "B": "2"}[reading.option])
        return reading
    text = canonical_labels(_COURTESY.sub(" ", text), options)
    alternation = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    judgement = judged(text, options, rf"(?i:(?<!\w)({alternation})(?!\w))", question_of(question))
    reading = _combined(judgement, _read_label(judgement.rest, options))
    if reading.option is not None and denied_at_clause_end(prepare(raw), lang):
        return Reading(None, "negated")  # "怒っていません": not angry
    return reading


# words that take an answer back in the glossed languages; with no English turn in the gloss, the reply's language
# was told wrong ("Triste. Non, en fait, en colère." read as Spanish) and nothing after them was understood
_FOREIGN_TURN = re.compile(r"(?i:\b(?:en\s+fait|en\s+realidad|na\s+verdade|in\s+realt[àa]|eigentlich|tats[äa]chlich|"
                           r"finalement|al\s+final|alla\s+fine|no,\s+espera|non,\s+attends|nein,\s+warte)\b|"
                           r"на\s+самом\s+деле|вообще-то|实际上|其实|不对|等等|実は|やっぱり|違います|사실은|잠깐)")
_SPECIAL_TOKENS = re.compile(r"<\|[\w.-]{1,40}\|>|</?s>|<eos>|<(?:start|end)_of_turn>|\[/?INST\]")
_SCORED_SLOT = rf"(?:(?i:{SLOT})\s*)?\(?(\b[AB]\b|(?<![\w.,/])[12](?=\s*(?:[:=)|]|→|->)))\)?"


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
    split = split_reasoning(text)  # before the template's tokens go: gpt-oss's channels are such tokens
    # a chat template's end tokens a server left in ("A<|im_end|>")
    split = split._replace(answer=_SPECIAL_TOKENS.sub(" ", split.answer))
    traces = [t for t in (split.reasoning, reasoning) if t and t.strip()]
    if split.cut or (traces and not split.answer.strip()):
        return Reading(None, "reasoning-only")  # deliberation only, cut off or never concluded
    reading = _read_visible(split.answer, options, question)
    if reading.option is None and reading.reason in ("none", "empty") and any(
            _read_visible(t, options, question).option for t in traces):
        return Reading(None, "reasoning-only")
    return reading


def _repeated(text: str, options: list[str]) -> str | None:
    """The option a degenerate reply repeats and says nothing else ("B B B B", "happy happy happy")."""
    words = [w.strip(".,;!*").lower() for w in text.split()]
    named = {o.lower(): o for o in options}
    return named.get(words[0]) if len(words) > 1 and len(set(words)) == 1 else None


def _read_visible(text: str, options: list[str], question: str | None) -> Reading:
    if not text.strip():
        return Reading(None, "empty")
    repeated = _repeated(text, options)
    if repeated is not None:
        return Reading(repeated)
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
