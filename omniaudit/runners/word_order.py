"""Word orders the phrase-by-phrase gloss cannot read, put in the order it can, before it runs.

A gloss (:mod:`.choice_glosses`) translates phrases in place, so a language whose order differs from English's keeps
it: German puts the verb last ("Ich würde die zweite wählen"), Chinese and Korean put the compared option first and
the adjective last ("A比B噪音更大", "B가 A보다 잡음이 많아요"), Japanese and Korean negate at the end of the clause
("Aではありません", "Aの方が良いとは言えません", "화난 게 아니에요"). :func:`in_gloss_order` rewrites these forms into
the order the English rules read ("ich wähle die zweite", "A is noisier than B", "not A", "it is not the case
that ..."); a negated comparison is left alone, never turned into the comparison.
"""

from __future__ import annotations

import re

_AFTER_OPTION = r"((?<![A-Za-z])[A-Za-z](?![A-Za-z])\)?|(?<!\d)[12](?!\d)\)?)"
_JA_NOT = re.compile(_AFTER_OPTION + r"\s*(?:で|じゃ)(?:は)?(?:ない|ありません|なく)")
_KO_NOT = re.compile(_AFTER_OPTION + r"\s*(?:가|이|는|은)?\s*(?:아닙니다|아니다|아니에요|아니요|아님)")


_DE_VERB_LAST = re.compile(r"(?i:\bich\s+w[uü]rde\s+(?:mich\s+f[uü]r\s+|mich\s+eher\s+f[uü]r\s+|eher\s+)?)"
                           r"([^.,;:!?\n]{1,60}?)\s+(?i:w[aä]hlen|nehmen|ausw[aä]hlen|bevorzugen|entscheiden|vorziehen)"
                           r"\b")


_OPT = r"((?<![A-Za-z])[AB](?![A-Za-z])|(?<!\d)[12](?!\d))"
_ZH_NOISE = r"(?:的)?(?:背景)?(?:噪音|杂音|噪声|底噪|嘈杂声)"
_KO_NOT_AFTER = r"(?![가-힣]{0,4}\s*(?:지\s*않|지\s*못|다고\s*(?:할|볼)\s*수\s*없))"  # "낫지 않습니다": not better
# Japanese: a statement denied at its end ("Aの方が良いとは言えません": one cannot say A is better) denies it whole
_JA_DENIED = re.compile(r"^(.*?)(?:とは言えません|とは言えない|とは思いません|とは思わない|わけではありません|"
                        r"わけではない)")
_KO_NOISE = r"(?:배경\s*)?(?:잡음|소음|노이즈)(?:이|가)?"
_COMPARED = {
    "zh": [(re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*" + _ZH_NOISE + r"(?:更|还|要)?(?:大|多|明显|重|响)"),
            "is noisier than"),
           (re.compile(_OPT + _ZH_NOISE + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?(?:大|多|明显|重|响)"),
            "is noisier than"),
           (re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?(?:吵|嘈杂)"), "is noisier than"),
           (re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?(?:干净|纯净)"), "is cleaner than"),
           (re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?自然"), "is more natural than"),
           (re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?(?:好|佳|优)"), "is better than")],
    "ko": [(re.compile(_OPT + r"\s*(?:가|이|는|은|의)?\s*" + _OPT + r"\s*보다\s*" + _KO_NOISE
                       + r"\s*(?:더|훨씬)?\s*(?:많|크|심)" + _KO_NOT_AFTER), "is noisier than"),
           (re.compile(_OPT + r"\s*(?:가|이|는|은)?\s*" + _OPT + r"\s*보다\s*(?:더|훨씬)?\s*깨끗" + _KO_NOT_AFTER),
            "is cleaner than"),
           (re.compile(_OPT + r"\s*(?:가|이|는|은)?\s*" + _OPT + r"\s*보다\s*(?:더|훨씬)?\s*자연스" + _KO_NOT_AFTER),
            "is more natural than"),
           (re.compile(_OPT + r"\s*(?:가|이|는|은)?\s*" + _OPT + r"\s*보다\s*(?:더|훨씬)?\s*(?:좋|낫)"
                       + _KO_NOT_AFTER),
            "is better than")],
}


# a clause denied at its end, for label answers ("怒っていません": not angry; "화난 게 아니에요": it is not angry);
# not the endings that are a word of their own ("少ない" few, "間違いない" certain, "しかない" only, "かもしれません"
# maybe, "わかりません" I don't know; "잡음이 없어요" has no noise)
_JA_CLAUSE_DENIED = re.compile(r"([^。.!?]*?)(?<!少)(?<!違い)(?<!しか)(?<!しれ)(?<!わかり)(?<!分かり)"
                               r"(?:ではありません|ではない|じゃない|じゃありません|くはありません|くありません|くない|"
                               r"ていません|ていない|ません|ない)(?:です)?(?=\s*(?:[。.!?]|$))")
_KO_CLAUSE_DENIED = re.compile(r"([^.!?]*?)\s*(?:게|것이|것은|건)?\s*(?:아니(?:에요|예요|다|야|니다|ㅂ니다)|아닙니다|"
                               r"않(?:아요|습니다|다|아))(?=\s*(?:[.!?]|$))")


def denied_at_clause_end(text: str, lang: str) -> bool:
    """A Japanese or Korean clause denied at its end ("怒っていません", "화난 게 아니에요"): what it names is not
    the answer, and which of several names it denies the gloss cannot tell ("怒っているのか驚いているのか、
    判断できません")."""
    pattern = {"ja": _JA_CLAUSE_DENIED, "ko": _KO_CLAUSE_DENIED}.get(lang)
    return bool(pattern and pattern.search(text))


def in_gloss_order(text: str, lang: str) -> str:
    """A Japanese or Korean negation after an option moved before it ("Aではありません" -> "not A"); a German
    choice whose verb comes last ("Ich würde die zweite wählen") put in the order the gloss reads ("ich wähle die
    zweite")."""
    if lang == "de":
        return _DE_VERB_LAST.sub(r"ich wähle \1", text)
    if lang == "ru":  # "B шумнее, чем A": the comparison's comma
        return re.sub(r",\s*(?=чем\b)", " ", text)
    if lang in _COMPARED:  # "A比B噪音更大", "B가 A보다 잡음이 많아요": the comparison in English order
        for pattern, english in _COMPARED[lang]:
            text = pattern.sub(rf" \1 {english} \2 ", text)
    if lang == "ja":
        text = _JA_DENIED.sub(r"it is not the case that \1", text)
    negation = {"ja": _JA_NOT, "ko": _KO_NOT}.get(lang)
    return negation.sub(r"not \1 ", text) if negation else text


