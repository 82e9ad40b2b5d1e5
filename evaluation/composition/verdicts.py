"""The grading judge of C3PO free-form answers (§3): its prompt (:data:`JUDGE_PROMPT`), its verdict read
(:func:`parse_verdict`) and whether it says Yes to everything (:func:`verdict_yes_rate`).

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
