"""Words of certainty before an answer, per glossed language: "Eindeutig A.", "Sicuramente la B.", "明らかにBです".

A model that answers in another language often puts an adverb of certainty before the option, as English models
write "Definitely A.". Each reader's lexicon (:mod:`.choice_glosses`) takes these entries first, so the English
rules read "definitely A"; an adverb that means "probably" in that language is glossed "probably", which the
closed-item contract reads like the English word (a commitment, unlike "maybe"). An article between the adverb and
the option ("la B", "a B", "die A") goes with the adverb.

A short reply ("Eindeutig A.") has too few function words to tell its language, so it reads as English; for such
text :data:`~.choice_glosses.LATIN_GLOSS` glosses the adverbs of every Latin-script language at once (:data:`LATIN`;
none of them is an English word).
"""

from __future__ import annotations

# (adverb pattern, English, articles that may follow it before an option)
_LATIN = {
    "de": ([(r"ganz (?:eindeutig|klar)|eindeutig|definitiv|ganz sicher|sicherlich|auf jeden fall|ohne zweifel|"
             r"zweifellos|zweifelsohne|offensichtlich|klar", "definitely"),
            (r"wahrscheinlich|vermutlich|eher", "probably"), (r"vielleicht|eventuell|m[öo]glicherweise", "maybe")],
           r"die|der|das|den"),
    "fr": ([(r"sans aucun doute|d[ée]finitivement|clairement|[ée]videmment|certainement|assur[ée]ment|"
             r"incontestablement|bien s[uû]r|sans h[ée]siter", "definitely"),
            (r"sans doute|s[uû]rement|probablement", "probably"), (r"peut-[êe]tre", "maybe")], r"la|le"),
    "es": ([(r"sin (?:lugar a )?(?:ninguna )?dudas?|definitivamente|claramente|obviamente|evidentemente|"
             r"ciertamente|por supuesto|sin dudarlo", "definitely"),
            (r"seguramente|probablemente", "probably"), (r"quiz[aá]s?|tal vez|a lo mejor", "maybe")], r"la|el|lo"),
    "pt": ([(r"sem (?:sombra de )?d[úu]vida|com (?:toda a )?certeza|definitivamente|claramente|obviamente|"
             r"certamente|evidentemente", "definitely"),
            (r"provavelmente", "probably")], r"a|o"),
    "it": ([(r"senza (?:alcun )?dubbio|sicuramente|decisamente|chiaramente|certamente|ovviamente|"
             r"indubbiamente|senz'altro|di sicuro", "definitely"),
            (r"probabilmente", "probably")], r"la|il|lo"),
    "ru": ([(r"однозначно|определ[её]нно|безусловно|несомненно|явно|конечно|точно|без сомнени[яй]|"
             r"совершенно точно", "definitely"), (r"скорее всего|вероятнее всего", "probably")], None),
}

def _entries(lang: str) -> list[tuple[str, str]]:
    adverbs, articles = _LATIN[lang]
    out = []
    for pattern, english in adverbs:
        if articles:
            out.append((rf"(?:{pattern})(?:\s*,)?\s+(?:{articles})(?=\s+\(?[AB12]\b)", english))
        out.append((rf"(?:{pattern})", english))
    return out


CERTAINTY: dict[str, list[tuple[str, str]]] = {lang: _entries(lang) for lang in _LATIN}
CERTAINTY["zh"] = [("肯定不是", "definitely not "), ("确定是", "definitely "), ("肯定是", "definitely "),
                   ("显然是", "definitely "), ("明显是", "definitely "), ("毫无疑问是", "definitely "),
                   ("毫无疑问", "definitely "), ("当然是", "definitely "), ("绝对是", "definitely "),
                   ("一定是", "definitely "), ("无疑是", "definitely "), ("可能是", "maybe "),
                   ("大概是", "probably "), ("应该是", "probably ")]
CERTAINTY["ja"] = [("明らかに", "definitely "), ("間違いなく", "definitely "), ("確実に", "definitely "),
                   ("絶対に", "definitely "), ("もちろん", "definitely "), ("断然", "definitely "),
                   ("確かに", "definitely "), ("おそらく", "probably "), ("恐らく", "probably ")]
CERTAINTY["ko"] = [("분명히", "definitely "), ("확실히", "definitely "), ("당연히", "definitely "),
                   ("틀림없이", "definitely "), ("명백히", "definitely "), ("확실하게", "definitely "),
                   ("이죠", ""), ("죠", "")]
LATIN = tuple(lang for lang in _LATIN if lang != "ru")  # the Latin-script languages
