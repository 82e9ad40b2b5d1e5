"""Grading free-form answers (C3PO §3): normalised exact match first, then an LLM judge for semantic equivalence.

Normalisation, the same on both sides (:func:`normalize`): Unicode NFKC (full-width ``ＪＡＰＡＮＥＳＥ`` is
``JAPANESE``), case folding (``Straße`` = ``STRASSE``), Latin combining accents stripped after both are folded
(``İstanbul`` matches ``Istanbul``; ``México`` matches ``Mexico``), punctuation between words and at the ends dropped,
whitespace collapsed. A false match grades an answer right without asking the judge (a wrong result), a false
mismatch only costs a judge call, so whatever is in doubt is kept apart:

- numbers stay numbers: the sign (``-5`` is not ``5``; ``−5`` and ``minus five`` are ``-5``), the decimal point
  (``2.5`` is not ``25``; ``2.50`` is not ``2.5`` either: "3.10" may be a version), the fraction as written (``2/5``
  is not ``2.5``, nor ``0.4``, nor ``4/10``: a slash may be a date, a score or a ratio, so fractions are compared as
  written, not by value), the exponent (``10³`` is not ``103``), the vulgar fraction (``2½`` is ``2 1/2``);
- digit grouping: ``1,000`` = ``1000``, ``1,234.5`` = ``1234.5``; ``1,5``, ``10,00`` and ``1.000`` are ambiguous
  and stay as written (equal to nothing but themselves);
- number words are digits: English cardinals by a strict grammar (``three`` = ``3``, ``twenty-one`` = ``21``,
  ``one hundred and five`` = ``105``, ``a thousand`` = ``1000``, ``5 million`` = ``5000000``), Spanish, German and
  French ones up to the tens and their common compounds (``tres``, ``drei``, ``trois``, ``treinta y dos``,
  ``einundzwanzig``, ``quatre-vingt-dix``), Chinese numerals standing alone (``三``, ``二十一``, ``一百零五``);
  words that are also English words or articles are left (``once``, ``quince``, ``elf``, ``null``, ``sept``,
  ``seize``, ``cent``, ``un`` / ``une`` / ``una`` / ``ein`` / ``eine``);
- ordinals: ``3rd`` = ``third`` = ``第三`` (``troisième``, ``tercero``, ``dritte``), but not ``3``; ``second`` after a
  number is the unit (``1 second``);
- units and symbols stay: ``3 kg`` is neither ``3 g`` nor ``3``, ``50%`` is not ``50``, ``$5`` is not ``5``, ``C++``
  and ``C#`` are not ``C``, the grade ``A-`` is not ``A``; ``3kg`` = ``3 kg``, ``50 percent`` = ``50%``,
  ``3 kilograms`` = ``3 kg``; ``&`` is ``and``, ``U.S.A.`` is ``USA``;
- articles: ``the`` anywhere; ``a`` / ``an`` only at the start and before another word (``a dog`` = ``dog``, but
  ``vitamin A`` keeps its letter, ``A B`` and ``a 5`` stay); Spanish and French ``el la los las un una le les une l'``
  at the start before a lower-case word (``el perro`` = ``perro``, but ``El Salvador``, ``Los Angeles``, ``La Paz``
  and ``Les Paul`` keep theirs); German ``der das ein eine`` at the start before any word, ``die`` only before a
  capitalised noun in lower case (``die Katze``, not ``Die Hard``); an article in capitals (``UN``, ``LA``) is none.

When the normalised strings differ, a judge (any ``omniaudit judge`` SPEC) is asked whether the prediction picks out
the same entity or concept as the ground truth in the context of the question; it answers Yes or No, and the prompt
is stored with every graded row. Accuracy = #correct / #samples (an unanswered sample is wrong).

The judge's verdict is read by ``parse_verdict``: noise (byte garbage, one word repeated, the prompt echoed), an
empty answer and doubt are unparsed (None). A JSON verdict is read from its verdict keys (``{"verdict": "yes"}``,
``{"correct": false}``); an answer that is one verdict word is read in English, Spanish, German, French and Chinese
("True", "Y", "Correct", "Ja", "Non", "Sí", "是", "错"); otherwise an explicit Yes / No is the verdict (a leading one
stands over the explanation after it: "No, there is no difference." is No); a final labelled, concluded or revised
one ("Final answer: No", "..., so no", "Yes. Actually, no.") wins over the reasoning before it; two bare opposite
verdicts ("No - wait, Yes", "Yes. No.", "Yes, but no.") are a contradiction, unparsed; a hedge ("Yes... or maybe
no", "Yes, probably", "partially correct") is unparsed; without a verdict, an explicit statement of
(non-)equivalence is read ("There is no difference: both name a rabbit." is Yes; "not correct", "I don't think they
are the same" are No), but a double negative of a judgement ("not incorrect", "not wrong") is read as doubt, not as
Yes: it often means "acceptable, though not quite"; a final Yes / No answering the judge's own question answers
that question ("Are they different? No." is Yes). Spanish, German, French and Chinese verdicts are read through an
English gloss ("Sí", "Nein, das sind verschiedene Tiere.", "Non, ce n'est pas le même animal.", "是的", "不是").
An unparsed verdict is not a Yes, so the sample counts as wrong, and audits report how many there were.

A judge that says Yes to (nearly) everything grades every answer right: :func:`verdict_yes_rate` gives the Yes rate
of the verdicts read, with a Wilson 95% interval, and flags the judge when the interval's lower bound is above
``YES_FLAG`` (0.9) or when every verdict read is a Yes (at least ``YES_FLAG_MIN`` of them).
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from fractions import Fraction

import pandas as pd

from omniaudit.answer_language import Gloss, language, prepare, unreadable

JUDGE_PROMPT = ("Question: {question}\nGround-truth answer: {answer}\nPredicted answer: {prediction}\n"
                "In the context of the question, does the predicted answer pick out exactly the same entity or "
                "concept as the ground-truth answer? Answer with exactly one of: Yes, No.")


VERDICTS = ("Yes", "No")
YES_FLAG = 0.9  # a judge whose Yes rate has a Wilson 95% lower bound above this is flagged
YES_FLAG_MIN = 5  # ... or that says Yes to every one of at least this many verdicts
_THINK = re.compile(r"<think>.*?</think>|<think>.*\Z", re.S | re.I)  # an unclosed block is unfinished reasoning
_MARKS = re.compile(r"[*`#_\"]")
_TAGS = re.compile(r"</?[a-z][\w-]*>|<\|[\w-]+\|>", re.I)  # "<answer>Yes</answer>", "Yes<|im_end|>"
_LABEL = (r"(?:final\s+answer|answer|verdict|judg(?:e)?ment|decision|conclusion|output|response|so|therefore|thus|"
          r"hence|i\s+(?:would\s+)?say|i'd\s+say|actually|rather|on\s+(?:second\s+thought|reflection))")
# a verdict that ends the text after a label / conclusion word ("Yes. Actually, no.": a final commitment), or alone
# on its line or sentence
_FINAL_LABELLED = re.compile(rf"\b{_LABEL}(?:\s+is)?\s*[:,\-]?\s*[\s(\[]*(yes|no)[\s)\].!]*\Z")
_FINAL = re.compile(r"(?:\A|\n|[.!?:;]\s)[\s(\[]*(yes|no)[\s)\].!]*\Z")
_BOTH_FINAL = re.compile(r"(?:\A|\n|[.!?:;]\s)[\s(\[]*(?:yes\s*(?:and|or|/|,)\s*no|no\s*(?:and|or|/|,)\s*yes)"
                         r"[\s)\].!]*\Z")
_LABELLED = re.compile(rf"(?:\b{_LABEL}(?:\s+is)?\s*[:\-]\s*[(\[]?|\b(?:answer|verdict)\s+is\s+)(yes|no)\b"
                       r"(?!\s+(?:\w+\s+)?(?:different|difference|distinct|mismatch|discrepancy|longer))")
_LEADING = re.compile(r"\A[\s(\[]*(yes|no)[\s)\]]*(?:[.,!:;\u2014\u2013-]|\n|\Z)")
# a bare verdict word anywhere ("No - wait, Yes"): after the start or a punctuation mark, before one or the end
_FILLERS = r"(?:wait|actually|rather|hmm|or|oh|i mean|but|however|though|although|then again|also|and|then)"
_BARE = re.compile(rf"(?:\A|[.!?;:,(\-\u2014\u2013]|\n)\s*(?:{_FILLERS}\W*\s*)*(yes|no)"
                   r"(?=\s*(?:[.!?;:,)\-\u2014\u2013]|\n|\Z))")
_SYNONYMS = [(re.compile(r"\b(?:yep|yeah|yup|yea|affirmative)\b"), "yes"),
             (re.compile(r"\b(?:nope|nah|negative)\b(?!\s+\w)"), "no"),
             # Correct / Incorrect / True / False standing alone as a sentence or after a label ("Incorrect.",
             # "True, both name a rabbit.", "Answer: correct"): a verdict like Yes / No ("Incorrect. Yes." is both)
             (re.compile(r"(?:\A|(?<=[.!?;:\n,(\[/]))([ \t(\[]*)(?:correct|true)(?=[ \t)\]]*(?:[.!;,/\n]|\Z))"),
              r"\1yes"),
             (re.compile(r"(?:\A|(?<=[.!?;:\n,(\[/]))([ \t(\[]*)(?:incorrect|false)(?=[ \t)\]]*(?:[.!;,/\n]|\Z))"),
              r"\1no")]
_QUESTION = re.compile(r"[^.!?\n]*\?")  # a question (the judge's prompt echoed, or a rhetorical one) is no claim
_NOT = (r"(?:\bnot(?!\s+only\b)|n't|\bnever|\bno\s+longer|\bno\s+way|\bhardly|\bby\s+no\s+means|\bfar\s+from|"
        r"\bnowhere\s+near|\banything\s+but|\bfail(?:s|ed)?\s+to|\bneither|\bnor)")
# the words a negation reaches over ("I don't think they are the same"), not past a conjunction
_SCOPE = r"(?:(?!(?:but|and|although|though|yet|while|whereas)\b)[\w']+\s+)"
# a hedge, or a double negative of a judgement ("not incorrect", "not wrong": litotes, read as doubt, not as Yes)
_HEDGE = re.compile(rf"\b(?:maybe|perhaps|possibly|probably|unsure|uncertain|unclear|ambiguous|insufficient|"
                    rf"partial(?:ly)?|partly|somewhat|mostly|almost|nearly|roughly|approximately|loosely|"
                    rf"kind\s+of|sort\s+of|more\s+or\s+less|to\s+(?:some|a\s+certain)\s+extent|in\s+part|"
                    rf"close\s+(?:but|enough)|not\s+(?:entirely\s+|completely\s+|totally\s+|quite\s+)?"
                    rf"(?:sure|certain|confident)|hard\s+to\s+(?:say|tell)|"
                    rf"(?:cannot|can't|can\s+not)\s+(?:tell|determine|decide|say|be\s+sure|judge)|"
                    rf"i\s+doubt|doubtful|(?<!no\s)(?<!a\s)(?<!beyond\s)doubts?|arguabl[ey]|debatabl[ey]|"
                    rf"questionabl[ey]|i\s+guess|not\s+necessarily|(?:un)?likely)\b|"
                    rf"{_NOT}\s+{_SCOPE}{{0,2}}?(?:wrong|incorrect|false)\b")
# read in this order, each match removed before the next: negated negatives, negated positives, negatives, positives
_NEGATED_NEGATIVE = re.compile(rf"\b(?:no|without(?:\s+any)?|not\s+any|nothing)\s+(?:\w+\s+)?(?:difference|different|"
                               rf"mismatch|discrepancy|distinction|contradiction)s?\b|"
                               rf"{_NOT}\s+{_SCOPE}{{0,4}}?(?:different|distinct|differ|differs)\b")
_NEGATED_POSITIVE = re.compile(rf"{_NOT}\s+{_SCOPE}{{0,4}}?(?:the\s+)?(?:same|equivalent|identical|equal|synonym"
                               rf"(?:s|ous)?|a\s+match|match(?:es|ing)?|correct|right|true)\b|\bno\s+(?:match(?:es)?|"
                               rf"equivalence|correspondence)\b")
_NEGATIVE = re.compile(r"\b(?:different|differs?|difference|distinct|mismatch(?:es|ed)?|incorrect|wrong|unrelated|"
                       r"inequivalent|nonequivalent|non-equivalent|non-identical|dissimilar|unequal|contradicts?|"
                       r"contradictory|false)\b")
_POSITIVE = re.compile(r"\b(?:equivalent|same|identical|synonym(?:s|ous)?|match(?:es|ed|ing)?|correct|equal|true)\b|"
                       r"\bboth\s+(?:\w+\s+)?(?:name|refer|mean|denote|describe|identify|indicate|say|give|pick)s?\b")
# the whole answer one verdict word, in any of the languages read (after marks, brackets and end punctuation)
_WORD_VERDICTS = {
    **dict.fromkeys(["yes", "y", "true", "correct", "right", "ja", "richtig", "korrekt", "wahr", "stimmt", "oui",
                     "vrai", "vraie", "exact", "exacte", "si", "sí", "correcto", "correcta", "cierto", "verdadero",
                     "是", "是的", "对", "对的", "正确", "没错", "yep", "yeah", "yup", "✅", "✔", "✔️", "☑️", "👍"],
                    "Yes"),
    **dict.fromkeys(["no", "n", "false", "incorrect", "wrong", "nein", "falsch", "inkorrekt", "non", "faux",
                     "fausse", "incorrecte", "incorrecto", "incorrecta", "falso", "否", "不是", "不对", "错", "错误",
                     "不正确", "nope", "nah", "❌", "✗", "✘", "✖", "✖️", "👎"], "No"),
}
_WORD_EDGES = " \t\n.!,;:()[]{}'"  # not "?": "Yes?" asks
# an echo of the judge's prompt (its lines, its instruction) is no verdict; what the judge adds to it may be
_ECHO = re.compile(r"^[ \t]*(?:question|ground[- ]truth answer|predicted answer)[ \t]*:.*$|in the context of the "
                   r"question, does the predicted answer pick out exactly the same entity or concept as the "
                   r"ground[- ]truth answer\?|answer with exactly one of:\s*yes,\s*no\.?", re.I | re.M)
# a verdict in JSON ({"verdict": "yes"}, {"correct": true}) or as fields ("correct: false"): keys that state the
# verdict, and keys whose true means No; other keys (reasoning, explanation ...) are not read
_YES_KEYS = {"verdict", "answer", "judgment", "judgement", "decision", "result", "label", "output", "response",
             "grade", "evaluation", "correct", "correctness", "equivalent", "equivalence", "same", "match", "matches",
             "equal", "identical"}  # a key with one of these words ("is_correct", "final_answer", "same_entity")
_NO_KEYS = {"incorrect", "different", "mismatch", "wrong", "unequal", "inequivalent", "distinct", "differ", "differs",
            "not", "non"}  # ... or with one of these: its true is a No ("is_different", "not_same")
_ECHO_KEYS = {"ground", "truth", "gold", "reference", "expected", "prediction", "predicted", "question"}  # not read
_FENCE = re.compile(r"```(?:json|python)?", re.I)
# a field's value (its key is read from the words before it): true / false, or a quoted yes / no / true / false
_FIELD = re.compile(r"[\"']?[ \t]*[:=][ \t]*(?:(true|false)\b|[\"'](yes|no|true|false)[\"'])", re.I)
# Spanish, German, French and Chinese verdicts, glossed into English before the rules above
_ES_VERDICT = Gloss([
    (r"s[ií]", "yes"), (r"no estoy segur[oa]", "not sure"), (r"no hay (?:ninguna )?diferencia", "no difference"),
    (r"no(?=\s+[^\W\d_])", "not"),  # Spanish negates the verb: "No es la misma ciudad."
    (r"no", "no"), (r"(?:la |mi )?respuesta(?: final)?(?: es)?", "answer:"),
    (r"as[ií] que|por lo tanto|por tanto|entonces", "so"), (r"equivalentes?", "equivalent"),
    (r"distint[oa]s?|diferentes?", "different"), (r"iguales?|l[oa] mism[oa]|el mismo|la misma|los mismos", "the same"),
    (r"tal vez|quiz[aá]s?|a lo mejor|posiblemente|probablemente", "maybe"),
    (r"correct[oa]s?", "correct"), (r"incorrect[oa]s?", "incorrect"), (r"ambos|ambas", "both"),
    (r"nombran|se refieren a|designan", "name"), (r"coinciden?", "match"),
    (r"diferencias?", "difference"), (r"o", "or"), (r"y", "and"), (r"son|es", "are"),
])
_DE_VERDICT = Gloss([
    (r"ja", "yes"), (r"nein", "no"), (r"(?:die )?(?:endgültige )?antwort(?: ist| lautet)?", "answer:"),
    (r"urteil", "verdict:"), (r"also|daher|deshalb|somit|folglich", "so"),
    (r"(?:es gibt )?keinen? unterschied", "no difference"), (r"unterschiede?", "difference"),
    (r"stimm(?:t|en) nicht(?: überein)?", "do not match"), (r"stimm(?:t|en) überein", "match"),
    (r"nicht sicher|unsicher|unklar", "not sure"),
    (r"vielleicht|möglicherweise|wahrscheinlich|eventuell", "maybe"),
    (r"dasselbe|dieselben?|derselbe|denselben|das gleiche|die gleichen?|der gleiche|den gleichen|gleich(?:e[nrs]?)?|"
     r"identisch(?:e[nrs]?)?", "the same"),
    (r"verschieden(?:e[nrs]?)?|unterschiedlich(?:e[nrs]?)?|andere[nrs]?", "different"),
    (r"richtig|korrekt|zutreffend", "correct"), (r"falsch|inkorrekt", "incorrect"), (r"nicht|kein(?:e[nrs]?)?", "not"),
    (r"oder", "or"), (r"und", "and"), (r"beide", "both"), (r"bezeichnen|benennen|meinen", "name"),
    (r"ist|sind", "are"),
])
_FR_VERDICT = Gloss([
    (r"oui", "yes"), (r"non", "no"), (r"(?:la )?réponse(?: finale)?(?: est)?", "answer:"),
    (r"donc|ainsi|par conséquent|alors", "so"),
    (r"(?:il n'y a )?(?:aucune|pas de) différence", "no difference"), (r"différences?", "difference"),
    (r"(?:je ne suis )?pas sûre?|incertaine?", "not sure"), (r"peut-être|probablement|possiblement", "maybe"),
    (r"n'est|n'a|ne", ""), (r"pas", "not"),
    (r"identiques?|(?:la |le |les )?mêmes?", "the same"),
    (r"différente?s?|distincte?s?|autres?", "different"),
    (r"correcte?s?|exacte?s?|juste", "correct"), (r"incorrecte?s?|faux|fausses?|erronée?s?", "incorrect"),
    (r"ou", "or"), (r"et", "and"), (r"les deux", "both"),
    (r"désignent|nomment|se réfèrent à|renvoient à", "name"), (r"c'est|est|sont", "is"),
])
_ZH_VERDICT = Gloss([
    ("是的", "yes"), ("对的", "yes"), ("没错", "yes"), ("否", "no"), ("是否", "whether"), ("答案", "answer"),
    ("结论", "conclusion"), ("相同", "the same"), ("一样", "the same"), ("同一个", "the same"), ("同一", "the same"),
    ("不一样", "different"), ("不同", "different"), ("不相同", "different"), ("不确定", "not sure"),
    ("不清楚", "not sure"), ("也许", "maybe"), ("可能", "maybe"), ("或许", "maybe"), ("或", "or"), ("还是", "or"),
    ("正确", "correct"), ("不正确", "incorrect"), ("错误", "incorrect"), ("错", "wrong"), ("不错", "not bad"),
    ("两者都", "both"), ("两者", "both"), ("都", "both"), ("指的是", "name"), ("所以", "so"), ("因此", "so"),
    ("没有区别", "no difference"), ("没区别", "no difference"), ("区别", "difference"),
    ("不", "not"), ("是", "is"), ("的", ""), ("了", ""), ("吧", ""),
], cjk=True)
_ZH_YES_NO = [(re.compile(r"(?:\A|(?<=[:.!;]))\s*(?:不是|不对|错)(?=\s*(?:[,.!;:]|\Z))"), " no"),
              (re.compile(r"(?:\A|(?<=[:.!;]))\s*(?:是|对|没错)(?=\s*(?:[,.!;:]|\Z))"), " yes")]
# German and French answers: more of their function and verdict words than English ones
_DE_WORDS = {"ja", "nein", "das", "ist", "sind", "nicht", "die", "der", "den", "dem", "ein", "eine", "es", "sie",
             "und", "oder", "aber", "gleich", "gleiche", "gleichen", "dasselbe", "dieselbe", "derselbe", "verschieden",
             "verschiedene", "unterschiedlich", "unterschiedliche", "richtig", "falsch", "korrekt", "antwort",
             "beide", "vielleicht", "kein", "keine", "stimmt", "ich", "bin", "sicher", "handelt", "sich", "um"}
_FR_WORDS = {"oui", "non", "c'est", "est", "sont", "le", "la", "les", "des", "du", "ce", "même", "mêmes",
             "différent", "différents", "différente", "différentes", "pas", "ne", "n'est", "et", "ou", "réponse",
             "incorrecte", "faux", "vrai", "deux", "je", "suis", "peut-être", "il", "elle", "désignent", "identique",
             "identiques", "exact", "exacte", "aucune", "différence"}
_ES_WORDS = {"sí", "si", "es", "son", "el", "la", "los", "las", "misma", "mismo", "mismos", "mismas", "igual",
             "iguales", "distinto", "distinta", "distintos", "distintas", "diferente", "diferentes", "correcto",
             "correcta", "incorrecto", "incorrecta", "respuesta", "ambos", "ambas", "hay", "diferencia", "que", "se",
             "refieren", "coinciden", "coincide", "estoy", "seguro", "segura", "tal", "vez", "equivalentes", "y", "o"}
_EN_WORDS = {"the", "is", "are", "a", "an", "and", "of", "to", "it", "this", "they", "both", "same", "not", "yes",
             "answer", "prediction", "different", "so", "i", "or", "be"}


def _language(text: str) -> str:
    """``zh``, ``es``, ``de``, ``fr`` or ``en``: the shared detector, then, for an answer it takes for English, the
    verdict words of each language (a word two of them share, "es", "la", is no evidence between them)."""
    lang = language(text)
    if lang != "en":
        return lang
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower())
    lexicons = {"es": _ES_WORDS, "de": _DE_WORDS, "fr": _FR_WORDS}
    score = {lang: sum(w in lexicon and not any(w in other for o, other in lexicons.items() if o != lang)
                       for w in words) for lang, lexicon in lexicons.items()}
    best = max(score, key=score.get)
    rival = max(v for lang, v in score.items() if lang != best)
    return best if score[best] > max(rival, sum(w in _EN_WORDS for w in words)) else "en"


def _clean(raw: str | None) -> str:
    """The judge's answer without reasoning blocks, marks, tags ("<answer>Yes</answer>") and the prompt echoed."""
    return _ECHO.sub(" ", _TAGS.sub("\n", _MARKS.sub("", _THINK.sub(" ", prepare(raw))))).strip()


def _verdict_text(raw: str | None) -> str:
    """The judge's answer, lower case, without reasoning blocks, marks and the prompt echoed; Spanish, German,
    French and Chinese glossed."""
    text = _clean(raw)
    lang = _language(text)
    if lang == "zh":
        for pattern, word in _ZH_YES_NO:
            text = pattern.sub(word, text)
        text = _ZH_VERDICT(text)
    elif lang in ("es", "de", "fr"):
        text = {"es": _ES_VERDICT, "de": _DE_VERDICT, "fr": _FR_VERDICT}[lang](text)
    text = re.sub(r"\b(not|non)-(?=[^\W\d_])", "not ", text.lower())  # "not-equivalent", "non-matching"
    for pattern, word in _SYNONYMS:
        text = pattern.sub(word, text)
    return text


def _polarity(text: str) -> tuple[int, int]:
    """(statements of equivalence, statements of difference) in ``text`` (lower case), negations read first."""
    yes = no = 0
    for pattern, is_yes in ((_NEGATED_NEGATIVE, True), (_NEGATED_POSITIVE, False), (_NEGATIVE, False),
                            (_POSITIVE, True)):
        found = len(pattern.findall(text))
        text = pattern.sub(" ", text)
        yes, no = (yes + found, no) if is_yes else (yes, no + found)
    return yes, no


_UNREAD = object()  # no structured verdict in the answer: read its text


def _key_kind(name: str) -> str | None:
    """``yes`` for a verdict key ("verdict", "is_correct"), ``no`` for one whose true is a No ("is_different"), else
    None (reasoning, confidence, or the prompt's own fields: "ground_truth_answer")."""
    words = set(re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", str(name)).lower()))
    if words & _ECHO_KEYS:
        return None
    return "no" if words & _NO_KEYS else "yes" if words & _YES_KEYS else None


def _field_verdicts(data, out: list) -> None:
    """The verdicts the verdict keys of a parsed JSON object state (None for one that cannot be read)."""
    if isinstance(data, dict):
        for name, value in data.items():
            kind = _key_kind(name)
            flip = kind == "no"
            if kind:
                if isinstance(value, bool):
                    said = "Yes" if value else "No"
                elif isinstance(value, str):
                    said = parse_verdict(value)
                elif isinstance(value, dict):
                    _field_verdicts(value, out)
                    continue
                else:
                    said = None  # a number, a list, null: not a verdict
                out.append({"Yes": "No", "No": "Yes"}.get(said) if flip else said)
            elif isinstance(value, dict):
                _field_verdicts(value, out)


def _structured_verdict(raw: str):
    """The verdict of an answer in JSON or ``key: value`` fields (None: unreadable or contradictory), or _UNREAD.

    A JSON object is read by its verdict keys only; its verdicts must agree with each other and with any verdict the
    text around it states (an object without one leaves the text around it to read). Without JSON,
    ``correct: false`` / ``"verdict": "no"`` fields are read the same way."""
    text = _FENCE.sub(" ", _THINK.sub(" ", prepare(raw)))
    start, end = text.find("{"), text.rfind("}")
    data = None
    if 0 <= start < end:
        for load in (json.loads, ast.literal_eval):
            try:
                data = load(text[start:end + 1])
                break
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    said: list = []
    if isinstance(data, dict):
        _field_verdicts(data, said)
        rest = (text[:start] + " " + text[end + 1:]).strip()
    else:
        for m in _FIELD.finditer(text):
            before = re.findall(r"[a-z][a-z0-9_]*", text[max(0, m.start() - 60):m.start()].lower())
            kind = _key_kind(before[-1]) if before else None  # the key: the word before the colon
            if kind:
                yes = (m.group(1) or m.group(2)).lower() in ("true", "yes")
                said.append("Yes" if yes != (kind == "no") else "No")
        if not said:
            return _UNREAD
        rest = ""
    if not said:  # a JSON object without a verdict key ({"reasoning": ...}): the text around it, if any
        return parse_verdict(rest) if rest else None
    if None in said or len(set(said)) > 1:
        return None
    if rest and parse_verdict(rest) not in (None, said[0]):
        return None
    return said[0]


_AFTER_QUESTION = re.compile(rf"[\s)\]]*(?:{_LABEL}(?:\s+is)?\s*[:,\-]?)?[\s(\[]*\Z")


def _answering(text: str, start: int, said: str) -> str | None:
    """The verdict a final Yes / No at ``start`` gives, when it answers a question the judge asked itself: a question
    of difference flips it ("Are they different? No." is Yes), one with a negation makes it ambiguous ("Isn't it the
    same? No.": None); any other question, or none, leaves it."""
    asked = text.rfind("?", 0, start)
    if asked < 0 or not _AFTER_QUESTION.match(text[asked + 1:start]):
        return said
    question = re.split(r"[.!?\n]", text[:asked])[-1]
    if re.search(rf"{_NOT}|\bno\b", question):
        return None
    yes, no = _polarity(question)
    return {"yes": "no", "no": "yes"}[said] if no and not yes else said


def _repeated(text: str) -> bool:
    """A degenerate answer: one word said three times or more, and nothing else ("Yes. Yes. Yes.")."""
    words = re.findall(r"\w+", text)
    return len(words) >= 3 and len(set(words)) == 1


def parse_verdict(raw: str | None) -> str | None:
    """The grading judge's verdict, "Yes" (same entity or concept) or "No", or None when it cannot be read.

    Noise (:func:`~omniaudit.answer_language.unreadable`), an empty answer, one word repeated ("Yes Yes
    Yes") or the prompt echoed back is unparsed. A verdict in JSON (``{"verdict": "yes"}``, ``{"correct": false}``)
    or in fields (``correct: false``) is read from its verdict keys, and is unparsed when they disagree. An answer
    that is one verdict word is read in any of the languages (Yes / No, True / False, Y / N, Correct / Incorrect,
    Ja / Nein, Oui / Non, Sí / No, 是 / 否, 对 / 错, 正确 / 错误). Then, in order: an answer that ends in both
    ("Yes and no.", "Yes/No") is unparsed; a Yes / No that ends the answer after a label or conclusion ("Answer:",
    "so", "therefore", "actually" ...) wins over any reasoning before it; one that ends the answer alone on its line
    or sentence wins too, unless an opposite bare Yes / No came before it ("Yes. No.": a contradiction, unparsed);
    else the last labelled verdict ("Verdict: No" mid-text); else a leading Yes / No, which stands over the
    explanation after it ("No, there is no difference" is No) unless a later bare opposite verdict contradicts it
    ("No - wait, Yes": unparsed); a labelled or leading verdict followed by a hedge ("Yes... or maybe no", "Yes,
    probably") is unparsed; else, for an answer without a hedge, statements of equivalence ("both name a rabbit",
    "no difference") or of difference ("not the same", "different"), when they all point one way. A double negative
    of a judgement ("not incorrect", "not wrong") is read as a hedge, not as Yes. A final Yes / No that answers a
    question the judge asked itself answers that question: "Are they different? No." is Yes, "Isn't it the same?
    No." is unparsed. Questions (the prompt echoed back) are no claim; reasoning inside ``<think>`` blocks is
    ignored, and an unclosed one is unfinished reasoning.
    """
    if raw is None or not str(raw).strip() or unreadable(str(raw)):
        return None
    structured = _structured_verdict(str(raw))
    if structured is not _UNREAD:
        return structured
    text = _verdict_text(raw)
    if not text or _repeated(text):
        return None
    word = _WORD_VERDICTS.get(_clean(raw).strip(_WORD_EDGES).lower())
    if word:
        return word
    verdict = {"yes": "Yes", "no": "No"}
    if _BOTH_FINAL.search(text):  # "... Yes and no." / "Yes/No": both at once
        return None
    bare = [(m.start(1), m.group(1)) for m in _BARE.finditer(text)]
    final = _FINAL_LABELLED.search(text)
    if final:
        said = _answering(text, final.start(1), final.group(1))
        return verdict.get(said)
    final = _FINAL.search(text)
    if final:
        said = _answering(text, final.start(1), final.group(1))
        return None if not said or any(w != said for start, w in bare if start < final.start(1)) else verdict[said]
    claims = _QUESTION.sub(" ", text)
    labelled = [(m.start(1), m.group(1)) for m in _LABELLED.finditer(text)]
    if labelled:  # the last one, unless a bare opposite verdict follows it ("The answer is no - wait, yes.")
        start, said = labelled[-1]
        contradicted = any(w != said for s, w in bare if s > start)
        return None if contradicted or _HEDGE.search(claims) else verdict[said]
    leading = _LEADING.search(text)
    if leading:
        said = leading.group(1)
        return None if any(w != said for _, w in bare) or _HEDGE.search(claims) else verdict[said]
    if _HEDGE.search(claims):
        return None
    # "It is not the case that they name the same thing": the claim inside the frame, turned over
    frames = _NEGATED_FRAME.findall(claims)
    yes, no = _polarity(_NEGATED_FRAME.sub(" ", claims))
    if frames:
        if len(frames) > 1:
            return None
        yes, no = no, yes
    return "Yes" if yes and not no else "No" if no and not yes else None


_NEGATED_FRAME = re.compile(r"(?i:\b(?:it\s+is|it'?s)\s+(?:not\s+(?:the\s+case|true)|untrue|false)\s+that\b)")


def verdict_yes_rate(says: pd.Series | list) -> dict:
    """The Yes rate of the verdicts read (``judge_says``: "Yes" / "No" / None for not asked or unparsed).

    ``{n, yes, no, rate, ci, flagged, rule}``: ``rate`` = yes / (yes + no) with a Wilson score 95% interval
    (``ci``; None without a verdict); ``flagged`` when the lower bound is above ``YES_FLAG`` or every verdict is a
    Yes (at least ``YES_FLAG_MIN`` of them): such a judge grades every non-exact answer right, so the accuracy
    reflects the judge, not the model. Reference: the Wilson score interval, as SciPy's
    ``binomtest(yes, n).proportion_ci(method="wilson")``.
    """
    values = pd.Series(list(says), dtype=object)
    yes, no = int((values == "Yes").sum()), int((values == "No").sum())
    n = yes + no
    rule = (f"flagged when the Wilson 95% lower bound of the Yes rate is above {YES_FLAG}, or when every verdict read "
            f"is a Yes ({YES_FLAG_MIN} or more)")
    if not n:
        return {"n": 0, "yes": 0, "no": 0, "rate": None, "ci": [None, None], "flagged": False, "rule": rule}
    z, p = 1.959963984540054, yes / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (
        1 + z * z / n)
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    flagged = low > YES_FLAG or (no == 0 and yes >= YES_FLAG_MIN)
    return {"n": n, "yes": yes, "no": no, "rate": p, "ci": [low, high], "flagged": bool(flagged), "rule": rule}


# ------------------------------------------------------------------------------------ the normalised exact match
_ACCENTS = re.compile(r"[\u0300-\u036f]")  # Latin combining accents (kana voicing marks and others are kept)
# a typeset minus is a minus, a fraction slash a slash
_DASHES = str.maketrans({**{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
                         "\u2044": "/", "\u2215": "/"})
# a number as written: an optional sign (not after a letter or digit: "covid-19" has none), digits with internal
# . , / ("2.5", "1,000", "2/5"), or ".5"; then an ordinal suffix ("3rd") or the decade "s" ("90s"), if nothing follows
_TOKEN = re.compile(r"(?P<sign>(?<![\w.,/+\-])[-+])?(?P<num>\d+(?:[.,/]\d+)*|(?<![\w.])\.\d+)"
                    r"(?:(?P<ord>st|nd|rd|th)(?![^\W\d_])|(?P<decade>s)(?![^\W\d_]))?"
                    r"|(?P<word>[^\W\d_]+)|(?P<other>\S)")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")  # 1,000 / 1,000,000 / 1,234.5 (not 1,5 or 10,00)
_ACRONYM = re.compile(r"(?<![\w.])((?:[^\W\d_]\.){2,})(?![\w])")  # "U.S.A." -> "USA"
_KEPT = "%\u2030^"  # symbols that carry meaning, besides currency, math and other symbols ("$5", "~5", "50 %", "c++")
_WORD_SYMBOLS = {"percent": "%", "&": "and", **{f"{prefix}{unit}{plural}": f"{prefix[0]}{unit[0]}"
                                                for prefix in ("kilo", "centi", "milli") for unit in ("metre", "meter")
                                                for plural in ("", "s")},
                 **{f"{w}{plural}": abbr for w, abbr in (("kilogram", "kg"), ("kilogramme", "kg"), ("milligram", "mg"),
                                                         ("millilitre", "ml"), ("milliliter", "ml"))
                    for plural in ("", "s")}}  # unit words as their (unambiguous) symbols: "3 kilograms" = "3 kg"

# English number words (cardinal and ordinal), read by a strict grammar: "twenty-one" = 21, "one hundred and five" =
# 105, "two million five hundred thousand" = 2500000, "twenty-first" = 21st; a run that is no one number ("two
# three", "one twenty", "nineteen hundred") is read word by word
UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
ORDINAL_UNITS = {w: i + 1 for i, w in enumerate(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
     "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth"])}
ORDINAL_TENS = {w[:-1] + "ieth": v for w, v in TENS.items()}  # twentieth ... ninetieth
ORDINAL_SCALES = {w + "th": v for w, v in SCALES.items()}  # hundredth ... billionth
# other languages' number words, one word each (after case folding and accent stripping). Left out, because they
# are also English words or articles: Spanish "once", "quince", "un", "una"; German "elf", "null", "ein", "eine";
# French "un", "une", "sept", "seize", "cent" (and the ordinals "primer", "premier", "premiere")
SPANISH = {"cero": 0, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
           "nueve": 9, "diez": 10, "doce": 12, "trece": 13, "catorce": 14, "dieciseis": 16, "diecisiete": 17,
           "dieciocho": 18, "diecinueve": 19, "veinte": 20, "veintiuno": 21, "veintidos": 22, "veintitres": 23,
           "veinticuatro": 24, "veinticinco": 25, "veintiseis": 26, "veintisiete": 27, "veintiocho": 28,
           "veintinueve": 29, "treinta": 30, "cuarenta": 40, "cincuenta": 50,
           "sesenta": 60, "setenta": 70, "ochenta": 80, "noventa": 90, "cien": 100}
GERMAN = {"eins": 1, "zwei": 2, "drei": 3, "vier": 4, "funf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9,
          "zehn": 10, "zwolf": 12, "dreizehn": 13, "vierzehn": 14, "funfzehn": 15, "sechzehn": 16, "siebzehn": 17,
          "achtzehn": 18, "neunzehn": 19, "zwanzig": 20, "dreissig": 30, "vierzig": 40, "funfzig": 50, "sechzig": 60,
          "siebzig": 70, "achtzig": 80, "neunzig": 90, "hundert": 100}
FRENCH = {"deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12,
          "treize": 13, "quatorze": 14, "vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50, "soixante": 60}
NUMBERS = {**{w: i for i, w in enumerate(UNITS)}, **TENS, **SPANISH, **GERMAN, **FRENCH}  # one word, one number
_DE_COMPOUND = re.compile(r"(ein|zwei|drei|vier|funf|sechs|sieben|acht|neun)und(zwanzig|dreissig|vierzig|funfzig|"
                          r"sechzig|siebzig|achtzig|neunzig)")  # einundzwanzig = 21
# compounds, where a word that is no number alone is one: "treinta y dos", "vingt et un", "dix-sept", "soixante-dix",
# "quatre-vingt-dix-neuf"
_ES_UNITS = {w: SPANISH[w] for w in ("uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve")}
_FR_UNITS = {"un": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8, "neuf": 9}
_FR_TEENS = {"dix": 10, "onze": 11, "douze": 12, "treize": 13, "quatorze": 14, "quinze": 15, "seize": 16}
_FR_TENS = {"vingt": 20, "trente": 30, "quarante": 40, "cinquante": 50, "soixante": 60}
OTHER_ORDINALS = {"segundo": 2, "segunda": 2, "tercero": 3, "tercera": 3, "tercer": 3, "quinto": 5,
                  "deuxieme": 2, "troisieme": 3, "quatrieme": 4, "cinquieme": 5,
                  "erste": 1, "erster": 1, "ersten": 1, "erstes": 1, "zweite": 2, "zweiter": 2, "zweiten": 2,
                  "dritte": 3, "dritter": 3, "dritten": 3}
_TIME_ORDINALS = {"second", "segundo", "segunda"}  # also a unit of time: after a number ("1 second") a word
# articles: English "the" anywhere, "a" / "an" only before another word at the start ("a dog" = "dog", but
# "vitamin A" keeps its letter and "A B" both); Spanish and French ones at the start before a lower-case word
# ("el perro" = "perro", but "El Salvador", "Los Angeles", "La Paz" keep theirs), German ones at the start before
# any word (German nouns are capitalised); an article in capitals ("UN", "LA", "EL") is no article
ARTICLES = {"a", "an", "the"}
_ROMANCE_ARTICLES = {"el", "la", "los", "las", "un", "una", "le", "les", "une"}
_GERMAN_ARTICLES = {"der", "die", "das", "ein", "eine"}
_LEAD = re.compile(r"[\W_]*?([^\W\d_]+)(?:\s+|(?<=[lL])')(?=([^\W\d_]+)?)")
# Chinese numerals (one token of them alone: "三", "二十一", "一百零五", "一九八四"; not inside a word)
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}


def fold(text: str) -> str:
    """NFKC, case-folded, Latin accents stripped, recomposed: the same on both sides of a comparison."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", str(text)).casefold())
    return unicodedata.normalize("NFKC", _ACCENTS.sub("", folded))


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _zh_render(n: int) -> str:
    """The standard Chinese numeral of 0 <= n < 10**8 ("一十" for tens after a larger unit: 一百一十五)."""
    if n >= 10000:
        high, low = divmod(n, 10000)
        return _zh_render(high) + "万" + (("零" if low < 1000 else "") + _zh_render(low) if low else "")
    if n == 0:
        return "零"
    digits, out, gap = "零一二三四五六七八九", "", False
    for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = n // unit % 10
        if d:
            out += ("零" if gap and out else "") + digits[d] + name
            gap = False
        elif out:
            gap = True
    return out


def _zh_number(token: str) -> int | None:
    """The value of a token that is a Chinese numeral, written the standard way, else None."""
    if not token or any(c not in _ZH_DIGITS and c not in _ZH_UNITS and c != "万" for c in token):
        return None
    if all(c in _ZH_DIGITS for c in token):  # one digit, or three or more read digit by digit ("一九八四" = 1984)
        return int("".join(str(_ZH_DIGITS[c]) for c in token)) if len(token) != 2 else None
    total = section = 0
    digit = None
    for c in token:
        if c in _ZH_DIGITS:
            if digit is not None and digit != 0:
                return None
            digit = _ZH_DIGITS[c]
        elif c in _ZH_UNITS:
            section += (1 if digit is None else digit) * _ZH_UNITS[c]
            digit = None
        else:  # 万
            total, section, digit = (section + (digit or 0)) * 10000, 0, None
    value = total + section + (digit or 0)
    canonical = _zh_render(value)
    spelled = token.replace("两", "二").replace("〇", "零")
    return value if value < 10**8 and spelled in (canonical, canonical.removeprefix("一")
                                                    if canonical.startswith("一十") else canonical) else None


def _english_below_1000(words: list[str], i: int) -> tuple[int, int, bool] | None:
    """(value, end, ordinal) of the English number of 1..999 at ``words[i]``, strictly."""
    n = len(words)

    def below_100(k: int) -> tuple[int, int, bool] | None:
        if k >= n:
            return None
        w = words[k]
        if w in TENS:
            nxt = words[k + 1] if k + 1 < n else ""
            if nxt in UNITS[1:10]:
                return TENS[w] + UNITS.index(nxt), k + 2, False
            if nxt in ORDINAL_UNITS and ORDINAL_UNITS[nxt] < 10:
                return TENS[w] + ORDINAL_UNITS[nxt], k + 2, True
            return TENS[w], k + 1, False
        if w in UNITS[1:]:
            return UNITS.index(w), k + 1, False
        if w in ORDINAL_UNITS:
            return ORDINAL_UNITS[w], k + 1, True
        if w in ORDINAL_TENS:
            return ORDINAL_TENS[w], k + 1, True
        return None

    w = words[i]
    nxt = words[i + 1] if i + 1 < n else ""
    if w in UNITS[1:10] and nxt in ("hundred", "hundredth") or w == "hundred":
        start = i + 1 if w == "hundred" else i + 2
        value = 100 * (1 if w == "hundred" else UNITS.index(w))
        if words[start - 1] == "hundredth":
            return value, start, True
        k = start + 1 if start < n and words[start] == "and" else start
        rest = below_100(k)
        return (value + rest[0], rest[1], rest[2]) if rest else (value, start, False)
    if w in ("hundredth",):
        return 100, i + 1, True
    return below_100(i)


def _english_number(words: list[str], i: int) -> tuple[int, int, bool] | None:
    """(value, end, ordinal) of the longest English number at ``words[i]`` ("zero", "twenty-one", "a thousand and
    one", "two million five hundred thousand", "twenty-first"), strictly; None when no number starts there."""
    n = len(words)
    if words[i] == "zero":
        return 0, i + 1, False
    total, k, last_scale, done = 0, i, None, None
    while k < n:
        big = k == i and (words[k] in SCALES or words[k] in ORDINAL_SCALES) and SCALES.get(words[k], 1000) >= 1000
        part = (1, k, False) if big else _english_below_1000(words, k)  # "thousand" alone ("a thousand")
        if part is None:
            break
        value, end, ordinal = part
        if last_scale is not None and value >= last_scale:
            break
        scale_word = words[end] if end < n and not ordinal else ""
        scale = SCALES.get(scale_word) or ORDINAL_SCALES.get(scale_word)
        if scale and scale >= 1000 and (last_scale is None or scale < last_scale):
            total, last_scale, k = total + value * scale, scale, end + 1
            done = (total, k, scale_word in ORDINAL_SCALES)
            if done[2]:
                return done
            if k + 1 < n and words[k] == "and" and _english_below_1000(words, k + 1):
                k += 1
            continue
        return total + value, end, ordinal
    return done


def _other_number(words: list[str], i: int) -> tuple[int, int] | None:
    """(value, end) of a Spanish, German or French number of two words or more at ``words[i]``, or one German
    compound ("einundzwanzig"); None when none starts there."""
    n = len(words)
    w, nxt = words[i], words[i + 1] if i + 1 < n else ""
    if m := _DE_COMPOUND.fullmatch(w):
        return GERMAN[m.group(2)] + (1 if m.group(1) == "ein" else GERMAN[m.group(1)]), i + 1
    if w in ("treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa") and nxt == "y" and (
            i + 2 < n and words[i + 2] in _ES_UNITS):
        return SPANISH[w] + _ES_UNITS[words[i + 2]], i + 3

    def below_20(k: int) -> tuple[int, int] | None:  # French 1..19 inside a compound
        word = words[k] if k < n else ""
        if word == "dix" and k + 1 < n and words[k + 1] in ("sept", "huit", "neuf"):
            return 10 + _FR_UNITS[words[k + 1]], k + 2
        value = _FR_TEENS.get(word) or _FR_UNITS.get(word)
        return (value, k + 1) if value else None

    if w == "quatre" and nxt in ("vingt", "vingts"):  # 80, and quatre-vingt-un ... quatre-vingt-dix-neuf
        rest = below_20(i + 2) if nxt == "vingt" else None
        return (80 + rest[0], rest[1]) if rest else (80, i + 2)
    if w in _FR_TENS:
        if nxt == "et" and i + 2 < n and (words[i + 2] == "un" or (words[i + 2] == "onze" and w == "soixante")):
            return _FR_TENS[w] + (1 if words[i + 2] == "un" else 11), i + 3
        rest = below_20(i + 1)
        if rest and (1 < rest[0] < 10 or (w == "soixante" and rest[0] >= 10)):
            return _FR_TENS[w] + rest[0], rest[1]
        return None
    if w == "dix" and nxt in ("sept", "huit", "neuf"):
        return 10 + _FR_UNITS[nxt], i + 2
    return None


def _drop_leading_article(text: str) -> str:
    """``text`` without a leading article (see ``ARTICLES``); NFKC text, case not yet folded."""
    m = _LEAD.match(text)
    if not m or not m.group(2):
        return text
    article, word = m.group(1), m.group(2)
    low = article.casefold()
    apostrophe = text[m.end() - 1] == "'"
    if apostrophe:
        drop = low == "l" and word[0].islower()
    elif low in ("a", "an"):
        drop = len(word) >= 2
    elif low in _ROMANCE_ARTICLES:
        drop = not article.isupper() and word[0].islower()
    elif low == "die":  # also an English word ("Die Hard"): only "die" before a (German) noun
        drop = article == "die" and word[0].isupper()
    elif low in _GERMAN_ARTICLES:
        drop = not article.isupper() and len(word) >= 2
    else:
        drop = False
    return text[m.end():] if drop else text


def _kept(c: str, before: str, after: str) -> bool:
    """Whether a symbol carries meaning: currency, math and other symbols, "%", "^"; "#" next to a word ("c#", "#1",
    not a heading's "# "); a "-" that ends a word (the grade "A-")."""
    if c in _KEPT or unicodedata.category(c) in ("Sc", "Sm", "So"):
        return True
    if c == "#":
        return before.isalnum() or after.isalnum()
    return c == "-" and before.isalnum() and not after.isalnum()


def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) of a folded answer: ``num`` (canonical: grouping removed, "0.5" for ".5", a "-" kept),
    ``ord`` (a digit ordinal, "3rd"), ``word``, or ``sym`` (a kept symbol); other punctuation separates."""
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(text):
        if m.group("num") is not None:
            body = "".join(str(unicodedata.digit(c)) if c.isdigit() else c for c in m.group("num"))
            body = body.replace(",", "") if _GROUPED.fullmatch(body) else body
            body = "0" + body if body.startswith(".") else body
            sign = m.group("sign") or ""
            if m.group("ord") and body.isdigit() and not sign:
                out.append(("ord", _ordinal(int(body))))
            else:
                out.append(("num", sign + body + (m.group("decade") or "")))
        elif m.group("word") is not None:
            out.append(("word", m.group("word")))
        else:
            c = m.group("other")
            before, after = text[m.start() - 1:m.start()], text[m.end():m.end() + 1]
            if c == "&":
                out.append(("word", "and"))
            elif _kept(c, before, after):
                out.append(("sym", c))
    return out


def _plain_number(kind: str, text: str) -> bool:
    return kind == "num" and bool(re.fullmatch(r"[-+]?\d+(?:\.\d+)?", text))


def _nfkc(text: str) -> str:
    """NFKC, but a vulgar fraction stays apart from a number before it ("2½" = "2 1/2", not "21/2") and a
    superscript stays an exponent ("10³" = "10^3", not "103"); typeset minus signs and fraction slashes as ASCII."""
    out, superscript = [], False
    for c in str(text):
        decomposition = unicodedata.decomposition(c)
        plain = unicodedata.normalize("NFKC", c)
        if decomposition.startswith("<fraction>"):
            out.append(f" {plain} ")
        elif decomposition.startswith("<super>") and plain in "0123456789+-=()\u2212":
            out.append(plain if superscript else "^" + plain)
            superscript = True
            continue
        else:
            out.append(c)
        superscript = False
    return unicodedata.normalize("NFKC", "".join(out)).translate(_DASHES)


def normalize(text: str) -> str:
    """The answer for the exact match: see the module docstring. Numbers stay numbers ("-5", "2.5", "2/5", "3rd" as
    written, "1,000" = "1000", "three" = "3"), units and symbols stay ("3 kg", "50 %", "$5", "c++")."""
    raw = _nfkc(text)
    raw = _ACRONYM.sub(lambda m: m.group(1).replace(".", ""), _drop_leading_article(raw.strip()))
    tokens = _tokens(re.sub(r"\bper cent\b", "percent", fold(raw)))
    if any(t != ("word", "the") for t in tokens):
        tokens = [t for t in tokens if t != ("word", "the")]
    words = [t if kind == "word" else "" for kind, t in tokens]
    out: list[str] = []
    numeric: list[bool] = []  # whether out[k] is a number (after which "second" is a unit)
    i = 0
    while i < len(tokens):
        text_k, is_number, i = _read_token(tokens, words, i, numeric)
        out.append(text_k)
        numeric.append(is_number)
    # an answer made only of punctuation must not normalise to nothing
    return " ".join(out) or " ".join(fold(text).split())


def _read_token(tokens: list[tuple[str, str]], words: list[str], i: int,
                numeric: list[bool]) -> tuple[str, bool, int]:
    """(the normalised text of token ``i``, with the tokens that belong to it; whether it is a number; the index of
    the next token). ``numeric``: whether each token read so far is a number."""
    kind, t = tokens[i]
    if kind == "word" and t in ("minus", "negative") and i + 1 < len(tokens):
        negative = _negative(tokens, words, i)
        if negative is not None:
            return negative
    if kind == "num":
        return _number_token(tokens, words, i)
    if kind == "word":
        return _word_token(tokens, words, i, numeric)
    return t, False, i + 1


def _negative(tokens: list[tuple[str, str]], words: list[str], i: int) -> tuple[str, bool, int] | None:
    """"minus 5" / "negative five" as -5, else None."""
    kind, t = tokens[i + 1]
    if kind == "num" and t[0].isdigit():
        return "-" + t, True, i + 2
    number = _english_number(words, i + 1) if words[i + 1] else None
    if number and not number[2]:
        return f"-{number[0]}", True, number[1]
    return None


def _number_token(tokens: list[tuple[str, str]], words: list[str], i: int) -> tuple[str, bool, int]:
    """A number as written, times the scale word after it when the product is whole ("2 million")."""
    kind, t = tokens[i]
    scale = SCALES.get(words[i + 1]) if i + 1 < len(tokens) else None
    if scale and _plain_number(kind, t) and not t.startswith("+"):
        value = Fraction(t) * scale
        if value.denominator == 1:
            return str(value.numerator), True, i + 2
    return t, _plain_number(kind, t), i + 1


def _word_token(tokens: list[tuple[str, str]], words: list[str], i: int,
                numeric: list[bool]) -> tuple[str, bool, int]:
    """A number or ordinal in words (English, the other glossed languages, Chinese), else the word (or the symbol
    it names). "second" after a number is a unit, not an ordinal."""
    t = tokens[i][1]
    after_number = bool(numeric) and numeric[-1]
    number = _english_number(words, i)
    if number and not (number[1] == i + 1 and t in _TIME_ORDINALS and after_number):
        value, following, ordinal = number
        return (_ordinal(value) if ordinal else str(value)), not ordinal, following
    other = _other_number(words, i)
    if other:
        return str(other[0]), True, other[1]
    zh = _zh_number(t[1:]) if t.startswith("第") else None
    if t == "第" and i + 1 < len(tokens) and tokens[i + 1][0] == "num" and tokens[i + 1][1].isdigit():
        zh, i = int(tokens[i + 1][1]), i + 1
    if zh is not None:
        return _ordinal(zh), False, i + 1
    if t in OTHER_ORDINALS and not (t in _TIME_ORDINALS and after_number):
        return _ordinal(OTHER_ORDINALS[t]), False, i + 1
    if t in NUMBERS or _zh_number(t) is not None:
        return str(NUMBERS[t] if t in NUMBERS else _zh_number(t)), True, i + 1
    return _WORD_SYMBOLS.get(t, t), False, i + 1


def exact_match(prediction: str, answer: str) -> bool:
    """Whether the two answers are the same once normalised (:func:`normalize`); an empty prediction never is."""
    norm = normalize(prediction)
    return bool(norm) and norm == normalize(answer)


def grade(samples: pd.DataFrame, predictions: pd.DataFrame, judge: str | None = None, **judge_options) -> pd.DataFrame:
    """One row per sample: ``prediction``, ``exact``, ``closed``, ``read_by``, ``judge_prompt``, ``judge_raw``,
    ``judge_says``, ``correct``.

    ``predictions`` has ``id`` and ``prediction`` (missing ids count as unanswered). A count or a yes/no answer a
    closed reader reads (:mod:`~.closed_answers`: "There are three dogs." for gold 3) is decided without the judge
    (``closed``: whether it is the gold; ``read_by``: ``exact``, ``closed``, ``judge`` or None). Without ``judge``,
    only exact and closed matches are correct. ``judge_says`` is the verdict ``parse_verdict`` reads (None: not
    asked, or unparsed; an asked row has a ``judge_prompt``), so ``unparsed_verdicts`` counts them.
    """
    from omniaudit.runners import JudgeItem, make_judge

    df = samples[["id", "template_name", "category", "tier", "question", "answer"]].merge(
        predictions[["id", "prediction"]], on="id", how="left")
    from omniaudit.evaluation.composition.closed_answers import closed_reading

    df["prediction"] = df["prediction"].fillna("").astype(str)
    df["exact"] = [exact_match(p, a) for p, a in zip(df["prediction"], df["answer"], strict=True)]
    # a count or a yes/no the closed readers read decides the row; the judge is asked about the rest only
    closed = [None if e else closed_reading(p, a)
              for p, a, e in zip(df["prediction"], df["answer"], df["exact"], strict=True)]
    df["closed"] = [c is not None and c == normalize(a) for c, a in zip(closed, df["answer"], strict=True)]
    df["read_by"] = ["exact" if e else "closed" if c is not None else None
                     for e, c in zip(df["exact"], closed, strict=True)]
    ask = df[df["read_by"].isna() & (df["prediction"].str.strip() != "")]
    df["judge_prompt"] = None
    df["judge_raw"] = None
    df["judge_says"] = None
    if judge and len(ask):
        prompts = [JUDGE_PROMPT.format(question=q, answer=a, prediction=p)
                   for q, a, p in zip(ask["question"], ask["answer"], ask["prediction"], strict=True)]
        items = [JudgeItem(id=i, prompt=t, options=list(VERDICTS)) for i, t in zip(ask["id"], prompts, strict=True)]
        raws = make_judge(judge, **judge_options).answer(items)
        df.loc[ask.index, "judge_prompt"] = prompts
        df.loc[ask.index, "judge_raw"] = raws
        df.loc[ask.index, "judge_says"] = [parse_verdict(r) for r in raws]
    df.loc[df["judge_prompt"].notna(), "read_by"] = "judge"
    df["correct"] = df["exact"] | df["closed"] | (df["judge_says"] == "Yes")
    return df


def unparsed_verdicts(graded: pd.DataFrame) -> int:
    """Rows the judge was asked about whose verdict could not be read (they count as wrong)."""
    return int((graded["judge_prompt"].notna() & graded["judge_says"].isna()).sum())


def accuracy_table(graded_runs: list[pd.DataFrame]) -> dict:
    """Accuracy (percent) overall and by template, category, tier and category x tier (``IC/T2``; C3PO Table 3):
    mean and sd over the inference runs."""
    def summarize(values: list[float]) -> dict:
        s = pd.Series(values, dtype=float)
        return {"mean": float(s.mean()), "sd": float(s.std(ddof=1)) if len(s) > 1 else 0.0, "runs": len(s)}

    out = {"overall": summarize([100 * g["correct"].mean() for g in graded_runs])}
    keyed = [g.assign(category_tier=g["category"].astype(str) + "/T" + g["tier"].astype(str)) for g in graded_runs]
    for key, column in (("by_template", "template_name"), ("by_category", "category"), ("by_tier", "tier"),
                        ("by_category_tier", "category_tier")):
        groups = sorted({str(v) for g in keyed for v in g[column]})
        out[key] = {grp: summarize([100 * g.loc[g[column].astype(str) == grp, "correct"].mean()
                                    for g in keyed]) for grp in groups}
    return out
