"""Words that correct an answer, per glossed language: "A. Ich meinte B.", "A, anzi B.", "A。不对，是B。".

A reply that corrects itself must never be read as its first answer (:mod:`.commitment` reads English corrections:
"I mean", "or rather", "correction:"). Each language's lexicon (:mod:`.choice_glosses`) takes these entries first,
so the English rules see the correction and read the corrected answer, or leave the reply unread as reversed. A
word that is also a comparative or a degree ("точнее": more accurate, "plutôt": rather, "piuttosto") is one only
after a comma or in its fixed phrase.
"""

from __future__ import annotations

CORRECTIONS: dict[str, list[tuple[str, str]]] = {
    "es": [(r"(?:perd[oó]n,?\s+)?quise decir|quer[ií]a decir", "I mean"), (r"mejor dicho|o m[aá]s bien", "or rather"),
           (r"corrijo|correcci[oó]n", "correction"), (r"me equivoqu[eé]", "my mistake"), (r"espera", "wait")],
    "fr": [(r"(?:pardon,?\s+)?je voulais dire", "I mean"), (r"ou plut[ôo]t", "or rather"),
           (r"je corrige|correction", "correction"), (r"je me suis tromp[ée]e?", "my mistake"),
           (r"non(?=\s*,)", "no"), (r"attends", "wait")],
    "de": [(r"ich meinte|ich meine", "I mean"), (r"besser gesagt|vielmehr|oder eher", "or rather"),
           (r"korrektur|ich korrigiere", "correction"), (r"mein fehler", "my mistake"), (r"warte", "wait")],
    "it": [(r"intendevo|volevo dire", "I mean"), (r"anzi|o meglio", "or rather"),
           (r"correggo|correzione", "correction"), (r"mi sono sbagliat[oa]", "my mistake"), (r"non(?=\s*,)", "no"),
           (r"aspetta", "wait")],
    "pt": [(r"quis dizer|queria dizer", "I mean"), (r"ali[aá]s|ou melhor", "or rather"),
           (r"corrijo|corre[çc][ãa]o", "correction"), (r"me enganei|errei", "my mistake"), (r"espera", "wait")],
    "ru": [(r"я имел[а]? в виду|имел[а]? в виду", "I mean"),
           (r"(?<=,)\s*(?:точнее|вернее)|(?<=[,.!] )(?:точнее|вернее)(?=,)|скорее даже", "or rather"),
           (r"поправка|исправлюсь|исправляю", "correction"), (r"я ошиб(?:ся|лась)", "my mistake")],
    "zh": [("不对", "wait, "), ("更正", "correction"), ("訂正", "correction"), ("纠正", "correction"),
           ("我是说", "I mean "),
           ("我的意思是", "I mean "), ("应该说", "or rather "), ("确切地说", "or rather "),
           ("说错了", "my mistake, "), ("等等", "wait, "), ("不,", "no, ")],
    "ja": [("いや,", "no, "), ("いいえ,", "no, "), ("違います", "no, "), ("実は", "actually "),
           ("待って", "wait, "), ("訂正", "correction"), ("間違えました", "my mistake, "), ("ではなく", " or rather "),
           ("じゃなくて", " or rather "), ("というか", " or rather ")],
    "ko": [("아니요,", "no, "), ("아니,", "no, "), ("사실은", "actually "), ("잠깐", "wait, "),
           ("정정", "correction"), ("잘못 말했", "my mistake, "), ("아니 잠깐", "wait, "), ("다시 말해", "I mean ")],
}
