"""Number words the normalised exact match does not read, written as digits, and the words around a number that make
it no plain count, by language, for the closed number reader (:mod:`~.closed_answers`).

:func:`spell_digits` writes as digits, in folded text (:func:`~omniaudit.answer_match.fold`: lower case, Latin accents
and Russian "ё"/"й" marks stripped): Russian cardinals in their case and collective forms ("три", "двух", "двое",
"двадцать один"); Portuguese and Italian ones ("dois", "duas", "tre", "ventuno"); Chinese and Japanese numerals
before a counter ("三只", "两个", "三匹", "ふたり"); Korean native numerals before a counter ("두 마리", "세 명") or
standing alone ("셋입니다"); "only one" with an article ("solo un cane", "um só", "a single dog"); ordinals as "3th"
("第三只", "세 번째", "третий", "terzo"), which :func:`~omniaudit.answer_match.normalize` reads as ordinals. English,
Spanish, German and French words are normalize's. A word that is also another word is read only where it cannot be
the other: Italian "due" not where English writes it ("due to", "is due"), Korean "네" ("yes") and "세" only before a
counter, a Chinese numeral only before a counter of things one counts ("一起", "一段时间", "一部分" are no numbers) and
not after "第" (an ordinal), "另" ("another"), "每" ("each") or a demonstrative; never "sei" (Portuguese "I know",
Italian "you are"), "сорок" (also "magpies"), "семью" ("family"), nor the articles "um", "uma", "un", "una".
Two numerals run together ("两三只", "두세 마리", "二、三匹") are written as a range ("2-3"), which the reader does not
read.

The patterns after it match normalised text (folded, "the" dropped, punctuation gone, words apart, the reader's
break marks kept): doubt, bounds, ranges, denials, totals, negations, "one more" (:data:`HEDGE`, :data:`BOUND`,
:data:`RANGE`, :data:`DENIED`, :data:`TOTAL`, :data:`NEGATION`, :data:`MORE`), the numbers that count nothing
(:data:`AMOUNT`, :data:`LABEL`, :data:`TIME_UNIT`, :data:`STAMP`, :data:`ORDINAL`, :data:`PRONOUN_ONE`,
:data:`PARTITIVE`) and what a question asks (:data:`ASKED`, :data:`ASKS_TIME`, :data:`ASKS_POSITION`).
"""

from __future__ import annotations

import re


def words(text: str, sep: str | None = None) -> frozenset[str]:
    """The words of ``text``, split at ``sep`` (whitespace by default)."""
    return frozenset(text.split(sep))


_RU_FORMS = {
    0: "ноль нуль ноля нуля",
    1: "один одна одно одного однои одному одним одну одном",
    2: "два две двух двум двумя двое двоих",
    3: "три трех трем тремя трое троих",
    4: "четыре четырех четырем четырьмя четверо четверых",
    5: "пять пяти пятью пятеро пятерых",
    6: "шесть шести шестью шестеро шестерых",
    7: "семь семи семеро семерых",
    8: "восемь восьми восемью восьмеро",
    9: "девять девяти девятью девятеро",
    10: "десять десяти десятью десятеро",
    11: "одиннадцать одиннадцати",
    12: "двенадцать двенадцати",
    13: "тринадцать тринадцати",
    14: "четырнадцать четырнадцати",
    15: "пятнадцать пятнадцати",
    16: "шестнадцать шестнадцати",
    17: "семнадцать семнадцати",
    18: "восемнадцать восемнадцати",
    19: "девятнадцать девятнадцати",
    20: "двадцать двадцати",
    30: "тридцать тридцати",
    50: "пятьдесят пятидесяти",
    60: "шестьдесят шестидесяти",
    70: "семьдесят семидесяти",
    80: "восемьдесят восьмидесяти",
    90: "девяносто девяноста",
    100: "сто",
}
RU = {form: value for value, forms in _RU_FORMS.items() for form in forms.split()}
_PT_IT_FORMS = {
    2: "dois duas",
    3: "tre",
    4: "quatro quattro",
    5: "cinque",
    7: "sete sette",
    8: "oito otto",
    9: "nove",
    10: "dez dieci",
    11: "undici",
    12: "doze dodici",
    13: "treze tredici",
    14: "catorze quattordici",
    15: "quinze quindici",
    16: "dezesseis dezasseis sedici",
    17: "dezessete dezassete diciassette",
    18: "dezoito diciotto",
    19: "dezenove dezanove diciannove",
    20: "vinte venti",
    21: "ventuno",
    22: "ventidue",
    23: "ventitre",
    24: "ventiquattro",
    25: "venticinque",
    26: "ventisei",
    27: "ventisette",
    28: "ventotto",
    29: "ventinove",
    30: "trinta trenta",
    40: "quarenta quaranta",
    50: "cinquenta cinquanta",
    60: "sessenta sessanta",
    70: "setenta settanta",
    80: "oitenta ottanta",
    90: "noventa novanta",
    100: "cem cento",
}
PT_IT = {form: value for value, forms in _PT_IT_FORMS.items() for form in forms.split()}
_PT_UNITS = {
    "um": 1,
    "uma": 1,
    "dois": 2,
    "duas": 2,
    "tres": 3,
    "quatro": 4,
    "cinco": 5,
    "seis": 6,
    "sete": 7,
    "oito": 8,
    "nove": 9,
}  # after "vinte e" ... "noventa e"
_PT_TENS = {
    "vinte": 20,
    "trinta": 30,
    "quarenta": 40,
    "cinquenta": 50,
    "sessenta": 60,
    "setenta": 70,
    "oitenta": 80,
    "noventa": 90,
}
_ENGLISH_DUE = re.compile(
    r"(?:\b(?:is|are|was|were|be|been|being|become|becomes|fall|falls|come|comes|its|their|his|her|in|past|long|"
    r"payment|rent|not|and|or)\s+due\b|\bdue\s+(?:to|for|date|dates|course|process|diligence|respect|care|time|on|"
    r"at|by|back|out|in|now|soon|today|tomorrow|west|east|north|south)\b)"
)
_ONLY_ONE = re.compile(
    r"\b(?:(?:solo|solamente|unicamente|apenas|somente|seulement|nur|genau|exactamente|exatamente|esattamente|"
    r"exactement|soltanto)\s+(?:un|una|um|uma|une|ein|eine|einen|einem|einer)|(?:un|una|um|uma|une)\s+(?:solo|sola|so|"
    r"seul|seule|unico|unica)|(?:ein|eine|einen|einem)\s+einzige[nrms]?|a\s+single|qu['\u2019]une?)\b"
)

# Chinese and Japanese: a numeral is a number before a counter (or a Japanese kana number)
_CJK_NUMERAL = "零〇一二两兩三四五六七八九十百"
# counters of things one counts; not those of set phrases ("一部分" part of, "一段时间" a while, "一家人" a family,
# "一种" a kind of, "一句话" a word, "一把" a grab, "一支乐队" a band, "한 가지" one kind, "한 곳" one place)
COUNTERS = "只个個位名人条條匹头頭羽辆輛台臺次声聲回度遍架首曲张張本枚棵朵颗顆根つ"
_CJK_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2, "兩": 2}
_CJK_RUN = rf"[{_CJK_NUMERAL}]+"
_CJK_COUNTED = re.compile(
    rf"(?<![第另每这那哪這同上下几幾数數何唯])(?P<a>{_CJK_RUN})"
    rf"(?:\s*(?P<c>到|至|或者|或|、|,|~|〜|-)\s*(?P<b>{_CJK_RUN}|\d+))?"
    rf"(?=\s*(?:[多余来几幾]\s*)?[{COUNTERS}])"
)
_CJK_ALONE = re.compile(rf"(?<=[是为為有共])(?P<a>[{_CJK_NUMERAL}]+)(?=\s*(?:[。.!！,，;；]|です|でした|だ|$))")
_KANA = {
    "ひとつ": "1つ",
    "ふたつ": "2つ",
    "みっつ": "3つ",
    "よっつ": "4つ",
    "いつつ": "5つ",
    "むっつ": "6つ",
    "ななつ": "7つ",
    "やっつ": "8つ",
    "ここのつ": "9つ",
    "ひとり": "1人",
    "ふたり": "2人",
}
_KANA_NUMBER = re.compile("|".join(_KANA))

# Korean native numerals: before a counter, alone with a particle after, or two run together (a range)
KO_COUNTERS = "마리|명|사람|분|개|번|대|곡|그루|권"
_KO_BEFORE = {
    "한": 1,
    "두": 2,
    "세": 3,
    "네": 4,
    "다섯": 5,
    "여섯": 6,
    "일곱": 7,
    "여덟": 8,
    "아홉": 9,
    "열": 10,
    "열한": 11,
    "열두": 12,
    "열세": 13,
    "열네": 14,
    "열다섯": 15,
    "스무": 20,
}
_KO_ALONE = {"하나": 1, "둘": 2, "셋": 3, "넷": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8, "아홉": 9}
_KO_RANGES = {
    "한두": "1-2",
    "두세": "2-3",
    "두서너": "2-4",
    "서너": "3-4",
    "너덧": "4-5",
    "네다섯": "4-5",
    "대여섯": "5-6",
    "예닐곱": "6-7",
}
_KO_RANGE = re.compile(rf"(?<![가-힣])({'|'.join(_KO_RANGES)})\s?(?=(?:{KO_COUNTERS}))")
# "세대" (generation), "열대" (tropics), "세분" and "한번" ("once", "try") are words: 대, 분 and 번 after a space only
_KO_COUNTED = re.compile(
    rf"(?<![가-힣])({'|'.join(sorted(_KO_BEFORE, key=len, reverse=True))})(?:\s(?=(?:{KO_COUNTERS})(?!째))|"
    rf"(?=(?:{KO_COUNTERS.replace('|분|', '|').replace('|번|', '|').replace('|대|', '|')})(?!째)))"
)
_KO_STANDING = re.compile(
    rf"(?<![가-힣])({'|'.join(_KO_ALONE)})(?=입니다|이에요|예요|이요|요|이다|이|은|는|뿐|밖에|만|[^가-힣]|$)"
)
_RU_COMPOUND = re.compile(
    rf"(?<!\w)({'|'.join(w for w, v in RU.items() if v in (20, 30, 50, 60, 70, 80, 90))})\s+"
    rf"({'|'.join(w for w, v in RU.items() if 1 <= v <= 9)})(?!\w)"
)
_RU_WORD = re.compile(rf"(?<!\w)({'|'.join(sorted(RU, key=len, reverse=True))})(?!\w)")
# ordinals, written "Nth" so that normalize reads them as ordinals ("第三只", "세 번째", "третий", "terzo")
_KO_ORDINAL = re.compile(r"(?<![가-힣])(첫|두|세|네|다섯)\s?번째|(?<![가-힣])(첫|둘|셋|넷)째")
_KO_ORDINALS = {"첫": 1, "두": 2, "세": 3, "네": 4, "다섯": 5, "둘": 2, "셋": 3, "넷": 4}
_WORD_ORDINAL = re.compile(
    r"(?<!\w)(?:(перв(?:ыи|ая|ое|ого|ои|ую|ом|ые|ых))|(втор(?:ои|ая|ое|ого|ую|ом|ые|ых))|"
    r"(трет(?:ии|ья|ье|ьего|ьеи|ью|ьем|ьи|ьих))|(четверт(?:ыи|ая|ое|ого|ои|ую))|(пят(?:ыи|ая|ое|ого|ои|ую)))(?!\w)"
    r"|\b(?:(primeir[oa]s?|primo)|(terceir[oa]s?|terz[oaie]))\b"
)
_CJK_ORDINAL = re.compile(rf"第\s*({_CJK_RUN}|\d+)")
_PT_COMPOUND = re.compile(rf"\b({'|'.join(_PT_TENS)})\s+e\s+({'|'.join(_PT_UNITS)})\b")
_PT_IT_WORD = re.compile(rf"\b({'|'.join(sorted(PT_IT, key=len, reverse=True))}|due)\b(?!\s+off\b)")


def cjk_value(run: str) -> int | None:
    """The value of a Chinese or Japanese numeral of 0..999 written the standard way ("三", "十二", "二十一",
    "一百零五", "两百"), else None."""
    if len(run) == 1:
        return 10 if run == "十" else _CJK_DIGIT.get(run)
    m = re.fullmatch(
        r"(?:(?P<h>[一二两兩三四五六七八九])百零?)?(?:(?P<t>[二三四五六七八九])?(?P<ten>十))?"
        r"(?P<u>[一二三四五六七八九])?",
        run,
    )
    if not m or not (m["h"] or m["ten"]) or (m["h"] and m["t"] is None and m["ten"] and "零" in run):
        return None
    hundreds = _CJK_DIGIT[m["h"]] * 100 if m["h"] else 0
    tens = (_CJK_DIGIT[m["t"]] if m["t"] else 1) * 10 if m["ten"] else 0
    return hundreds + tens + (_CJK_DIGIT[m["u"]] if m["u"] else 0)


def _cjk_run(run: str) -> str:
    """A numeral as digits; two digit numerals run together ("两三") as a range; else as written."""
    if run.isdigit() and run.isascii():
        return run
    value = cjk_value(run)
    if value is not None:
        return str(value)
    if len(run) == 2 and all(_CJK_DIGIT.get(c) for c in run) and run[0] != run[1]:
        return f"{_CJK_DIGIT[run[0]]}-{_CJK_DIGIT[run[1]]}"
    return run


def _cjk(m: re.Match) -> str:
    if m["b"] is None:
        return _cjk_run(m["a"])
    joint = "-" if m["c"] in "到至~〜-" else f" {m['c']} "
    return f"{_cjk_run(m['a'])}{joint}{_cjk_run(m['b'])}"


def _pt_it(m: re.Match) -> str:
    word = m.group(1)
    if word == "due":
        context = m.string[max(0, m.start() - 20) : m.end() + 20]
        return word if _ENGLISH_DUE.search(context) else "2"
    return str(PT_IT[word])


def spell_digits(text: str) -> str:
    """``text`` (folded) with the number words of the module docstring as digits, its ordinal words as "3th"."""
    text = _ONLY_ONE.sub("1", text)
    text = _CJK_ORDINAL.sub(lambda m: f" {_cjk_run(m.group(1))}th ", text)
    text = _KO_ORDINAL.sub(lambda m: f" {_KO_ORDINALS[m.group(1) or m.group(2)]}th ", text)
    text = _WORD_ORDINAL.sub(lambda m: f" {(1, 2, 3, 4, 5, 1, 3)[m.lastindex - 1]}th ", text)
    text = _KANA_NUMBER.sub(lambda m: _KANA[m.group(0)], text)
    text = _CJK_COUNTED.sub(_cjk, text)
    text = _CJK_ALONE.sub(lambda m: _cjk_run(m["a"]), text)
    text = _KO_RANGE.sub(lambda m: _KO_RANGES[m.group(1)] + " ", text)
    text = _KO_COUNTED.sub(lambda m: f"{_KO_BEFORE[m.group(1)]} ", text)
    text = _KO_STANDING.sub(lambda m: f"{_KO_ALONE[m.group(1)]} ", text)
    text = _RU_COMPOUND.sub(lambda m: str(RU[m.group(1)] + RU[m.group(2)]), text)
    text = _RU_WORD.sub(lambda m: str(RU[m.group(1)]), text)
    text = _PT_COMPOUND.sub(lambda m: str(_PT_TENS[m.group(1)] + _PT_UNITS[m.group(2)]), text)
    return _PT_IT_WORD.sub(_pt_it, text)


# --- the words around a number, matched in normalised text (folded, "the" dropped, punctuation gone, words apart)
_CJK_AFTER = "多|余|来|左右|以上|以下|上下|くらい|ぐらい|程度|ほど|前後|近く|정도|쯤|이상|이하|미만|가량|남짓|넘게|여"
# doubt anywhere in the reply: it does not commit to one count
HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|likely|not\s+(?:\w+\s+)?(?:sure|certain)|unsure|uncertain|unclear|"
    r"hard\s+to\s+(?:tell|say)|difficult\s+to\s+(?:tell|say)|can\s+t\s+tell|cannot\s+tell|can\s+not\s+tell|i\s+guess|"
    r"guess|guessing|if|unless|assuming|suppose|estimated?|approximately|roughly|several|multiple|a\s+few|"
    r"a\s+couple|could\s+be|might|may|quizas?|tal\s+vez|a\s+lo\s+mejor|probablemente|posiblemente|"
    r"no\s+estoy\s+segur[oa]|varios|varias|aproximadamente|"
    r"vielleicht|wahrscheinlich|moglicherweise|vermutlich|nicht\s+sicher|schwer\s+zu\s+sagen|mehrere|einige|ungefahr|"
    r"peut\s+etre|probablement|pas\s+sur|difficile\s+a\s+dire|plusieurs|quelques|environ|talvez|provavelmente|"
    r"possivelmente|nao\s+tenho\s+certeza|alguns|algumas|forse|probabilmente|non\s+(?:sono\s+)?sicur[oa]|diversi|"
    r"diverse|alcuni|alcune|circa|возможно|может\s+быть|наверное|наверно|вероятно|не\s+уверен[аы]?|трудно\s+сказать|"
    r"сложно\s+сказать|несколько|пару|примерно|приблизительно|около)\b"
    r"|可能|也许|或许|大概|大约|估计|不确定|很难说|难以确定|说不清|几|幾|一些|若干"
    r"|たぶん|多分|おそらく|かもしれ|およそ|だいたい|大体|いくつか|わからない|分からない"
    rf"|数[{COUNTERS}]|何[{COUNTERS}]か|아마|대략|여러|몇|확실하지|잘\s?모르"
)
# a bound on the number right after it, or right before it
BOUND = re.compile(
    r"(?:\b(?:at\s+least|at\s+most|more\s+than|less\s+than|fewer\s+than|over|under|about|around|nearly|almost|up\s+to|"
    r"some|upwards\s+of|no\s+more\s+than|no\s+fewer\s+than|no\s+less\s+than|max|maximum|min|minimum|"
    r"al\s+menos|por\s+lo\s+menos|como\s+(?:minimo|maximo)|mas\s+de|menos\s+de|unos|unas|alrededor\s+de|cerca\s+de|"
    r"casi|hasta|mindestens|hochstens|mehr\s+als|weniger\s+als|etwa|rund|fast|beinahe|knapp|uber|unter|bis\s+zu|"
    r"au\s+moins|au\s+plus|plus\s+de|moins\s+de|pres\s+de|presque|jusqu\s+a|peu\s+pres|pelo\s+menos|"
    r"no\s+(?:minimo|maximo)|mais\s+de|uns|umas|quase|ate|almeno|al\s+massimo|piu\s+di|meno\s+di|quasi|fino\s+a|oltre|"
    r"более|менее|больше|меньше|свыше|до|от|минимум|максимум|почти|порядка|где\s+то|хотя\s+бы)"
    r"|(?:至少|最多|超过|不到|不少于|不超过|将近|接近|差不多|多于|少于|约|約|少なくとも|最大|最低|ほぼ)[有是为]?"
    r"|약|최소|최대|적어도|거의|[~≈±<>≤≥])\s?\d"
    r"|\d+(?:\s(?:[^\s\d\u25c6\u00a6\u25c7]+\s)?(?:or\s+so|or\s+more|or\s+less|or\s+fewer|plus|ish|at\s+least|"
    r"at\s+most|"
    r"at\s+minimum|at\s+maximum|minimum|maximum|max|min|tops|odd|o\s+mas|o\s+menos|"
    rf"ou\s+mais|ou\s+menos|oder\s+mehr|ou\s+plus|o\s+piu|или\s+больше|или\s+более|с\s+лишним)\b|\s?\+"
    rf"|\s(?:[^\s\u25c6\u00a6\u25c7]{{0,2}}\s?)?(?:{_CJK_AFTER}))"
)
# Russian puts the noun first to say "about" ("человек пять": about five people)
RU_ABOUT = re.compile(
    r"(?:человек|людеи|минут|секунд|раз|штук|лет|часов|днеи|собак|кошек|птиц|машин|голосов)\s\d+(?:\s[\u25c6\u00a6]|$)"
)
RANGE = re.compile(r"\d\s*(?:-|–|~|〜|～|到|至|或者|或|、|/|から|か|ないし|내지|에서)\s*\d")
RANGE_WORDS = re.compile(
    r"\d+\s(?:[^\s\u25c6]+\s)?(?:or|to|oder|bis|ou|o|a|ao|или|либо|до)\s(?:[^\s\u25c6]+\s)?\d+(?![\w.])"
)
DENIED = re.compile(
    r"\b(?:not|no|never|isn\s+t|aren\s+t|wasn\s+t|weren\s+t|nicht|kein\w*|pas|non|nao|не|ни|nem|nunca|jamais|mai)\s"
    r"(?:[^\s\u25c6\u00a6\u25c7]+\s)?\d|(?:不是|并非|不|没有|没|無|无)\s\d"
    r"|\d+\s\S*(?:じゃない|じゃありません|ではない|ではありません|ではなく|じゃなく|아니)"
    r"|\d+\s\S{0,2}(?:も|도)|\d+\s\S{0,4}?[也都](?:没|不)"
)
# a total: "in total 3", "3 altogether", "总共3只"
TOTAL = re.compile(
    r"\b(?:in\s+total|total|totals|altogether|all\s+together|overall|in\s+all|combined|all\s+told|en\s+total|"
    r"en\s+conjunto|insgesamt|gesamt|zusammen|au\s+total|en\s+tout|no\s+total|em\s+total|ao\s+todo|in\s+totale|"
    r"in\s+tutto|totale|complessivamente|всего|итого|в\s+сумме|в\s+общеи\s+сложности)\b"
    r"|总共|一共|总计|合计|总数|共|合計|全部で|合わせて|총|모두|전부|합계"
)
# words that can follow a count without naming what it counts
UNIT_STOP = words(
    "of in at on to and or but so is are was were be been that which who from for with by as than total all each "
    "more less only just here there it they them we i you he she this these those then out over about around in "
    "altogether overall de en y e o et und oder von im ist sind es est sont il son sono di a da и в на из"
)
REPEATS = re.compile(r"^(?:(?:times?|veces|vez|mal|fois|vezes|volte|раз|раза)$|[次回번遍度声聲])")
# a restatement, not a list: "two horns, so two cars"
CONCLUSION = re.compile(
    r"^(?:so|therefore|thus|hence|ie|meaning|means|donc|quindi|portanto|entonces|итак|значит)$"
    r"|所以|因此|つまり|그래서|따라서"
)
# a question that echoes the item's ("How many dogs bark in the first 10 seconds?"), not one that offers an answer
ECHO = re.compile(
    r"^\W*(?:how|what|which|who|where|when|why|cuant|cual|wie|welche|combien|quel|quant|qual|сколько|как|какои)"
    r"|几|多少|什么|何|몇|어떤|얼마나",
    re.I,
)
CONJUNCTION = re.compile(r"^(?:and|plus|und|et|y|e|и|а)$|[和与及跟と]|[과와]$|^(?:하고|그리고)$")
TIME_UNIT = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s?(?:s|sec|secs|ms|min|mins|hrs?|sek|сек|мин"
    r"|(?:[^\s\d\u25c6\u00a6\u25c7]+\s)?(?:seconds?|milliseconds?|minutes?|hours?|segundos?|minutos?|sekunden?|"
    r"minuten?|"
    r"secondes?|secondi|secondo|minuti|секунд\w*|минут\w*|час\w*))(?!\w)"
    r"|(?<![\w.])\d+(?:\.\d+)?\s?(?:秒|分钟|分間|分|小时|時間|초|분(?=\s?(?:동안|간)))"
)
# positions, written "Nth" so that normalize reads them as ordinals: "2番目", "2-й", "2º", "#2", "2e"
ORDINAL = re.compile(rf"(\d+)\s*(?:番目|[{COUNTERS}]目|번째|째)|(\d+)-(?:и|я|е|го|му|м|ои|ыи|ии|ая|ое|ые|х)(?!\w)")
# a number that counts nothing: a share, a price, a measure, an age, a time of day; a number that labels one of
# several ("dog 2", "speaker 1")
AMOUNT = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s?(?:[%‰]|-?(?:db|dba|hz|khz|kg|g|mg|cm|mm|km|m|mph|kmh|bpm|fps|px|kb|mb|gb|°|percent|"
    r"decibels?|hertz|meters?|metres?|kilometers?|kilometres?|miles?|feet|foot|ft|inches|inch|pounds?|lbs?|kilograms?|"
    r"grams?|degrees?|(?:years?|months?|weeks?|days?)\s?-?\s?old)(?![\w]))|[$€£¥]\s?\d+(?:\.\d+)?"
    r"|(?<![\w.:])\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.?|p\.m\.?|o['’]?\s?clock)(?!\w)"
)
# "one" that counts nothing: "one can hear", "one by one", "at one point", "the one on the left", "uno puede"
ONE_IDIOM = re.compile(
    r"\b(?:one(?=\s+(?:can|could|may|might|would|should|must|hears|sees|notices)\b)"
    r"|one\s+(?:by|after)\s+(?:one|another|the\s+other)|one\s+at\s+a\s+time|at\s+one\s+(?:point|time|moment)"
    r"|one\s+day|one\s+way\s+or\s+another|in\s+one\s+go"
    r"|the\s+one(?=\s+(?:that|who|which|on|in|at|with|from|near|by|is|was|barks|makes|sounds)\b|\s*[.,;:!?)]|\s*$)"
    r"|uno(?=\s+(?:puede|oye|escucha)\b)|uno\s+(?:a|por|tras)\s+(?:uno|otro)|uno\s+alla\s+volta|по\s+одному)",
    re.I,
)
LABEL = re.compile(
    r"\b(?:dog|cat|bird|speaker|person|voice|man|woman|car|source|instrument|clip|audio|video|track|sample|animal|"
    r"participant|character|singer|musician|player|vehicle|horse|cow|hablante|sprecher|locuteur|falante|parlante|"
    r"step|part|point|option|item|question|line|example|note|reason|case|scenario|stage|phase|round|section|"
    r"figure|table|version|scene|shot|frame)"
    r"\s(\d+)\b(?!\s?[.,]\d)"
)
STAMP = re.compile(r"(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?![\d:])")
RAW_ORDINAL = re.compile(r"(\d+)\s*\.?\s*[ºª°]|#(\d+)|\b(\d+)(?:ème|eme|ère|ere|e|er)\b")
# "one" as a pronoun: "the loudest one", "the louder one", "this one", "a higher-pitched one at 0:05"
PRONOUN_ONE = re.compile(
    r"\b(?:this|that|each|every|any|which|other|same|last|latter|former|(?!least\b|almost\b)\w{2,}est|"
    r"(?:loud|quiet|bigg|small|larg|high|low|deep|clos|old|young|soft|fast|slow|long|short|clear|dark|heavi|light)er|"
    r"\d+(?:st|nd|rd|th))\s1\b(?!\s(?:of|de|di|из)\b)"
    r"|\b(?:a|an)\s(?:(?!(?:of|total|number|count)\b)[^\s\d\u25c6\u00a6\u25c7]+\s){1,3}1"
    r"(?=\s+(?:[\u25c6\u00a6\u25c7]|(?:at|in|on|with|that|which|who|from|and|or|but|is|was|too|as|to|by|near)\b)|\s*$)"
)
PARTITIVE = re.compile(
    r"(?:^|(?<=[\u25c6\u00a6]\s))1\s(?:of\s(?:them|which|these|those|whom)(?:\s(?:is|being|was|seems\s+to\s+be|"
    r"appears\s+to\s+be|sounds\s+like))?\s(?:a|an)|de\s(?:ellos|ellas)(?:\s(?:es|era))?\s(?:un|una))"
    r"(?:\s[^\s\d\u25c6\u00a6\u25c7]+){1,4}(?=\s[\u25c6\u00a6]|$)"
    rf"|其中\s?1\s?[{COUNTERS}]\s?是|うち\s?1\s?[{COUNTERS}]は[^\s\d。、,.]{{1,12}}?(?:です|だ|でした)"
    rf"|그\s?중\s?1\s?(?:{KO_COUNTERS})(?:은|는)\s?[^\s\d.,]{{1,12}}?(?:입니다|이에요|예요|이고|이며|였)"
)
ZERO_ALONE = words(
    "none|none at all|nobody|no one|there are none|there is none|there were none|ninguno|ninguna|nadie|keiner|keine|"
    "niemand|aucun|aucune|personne|nenhum|nenhuma|ninguem|nessuno|nessuna|никого|ни одного|ни однои|нисколько|没有|"
    "无|一个也没有|一只也没有|なし|いません|いない|ありません|없음|없습니다|없어요|없다",
    "|",
)
PERSONS = words(
    "people person persons speakers speaker voices voice men women man woman children child kids individuals humans "
    "singers performers musicians players adults boys girls"
)
ASKED = re.compile(
    r"\b(?:how\s+many|cuant[oa]s|wie\s+viele|wieviele|combien\s+de|combien\s+d|quant[oa]s|quant[ie]|сколько)\s"
    r"((?:\S+\s?){1,3})"
)
# a question that asks for a time or a duration (not one that only names a window: "in the first 10 seconds")
ASKS_TIME = re.compile(
    r"\b(?:how\s+long|how\s+much\s+time|what\s+time|at\s+what\s+(?:second|time|point|moment)|which\s+second|how\s+old|"
    r"duration|timestamp|how\s+many\s+(?:seconds|minutes|hours)|cuantos\s+(?:segundos|minutos)|cuanto\s+tiempo|"
    r"en\s+que\s+segundo|wie\s+viele\s+(?:sekunden|minuten)|wie\s+lange|in\s+welcher\s+sekunde|"
    r"combien\s+de\s+(?:secondes|minutes|temps)|a\s+quelle\s+seconde|quantos\s+(?:segundos|minutos)|quanto\s+tempo|"
    r"em\s+que\s+segundo|quanti\s+(?:secondi|minuti)|a\s+che\s+secondo|in\s+quale\s+secondo|"
    r"сколько\s+(?:секунд|минут|времени)|как\s+долго|на\s+какои\s+секунде)\b"
    r"|^(?:when|cuando|wann|quand|quando|когда)\b|多久|多长时间|什么时候|第几秒|几秒|多少秒"
    r"|何秒|いつ|どのくらいの時間|何分"
    r"|몇\s?초|언제|얼마나\s?오래|몇\s?분"
)
ASKS_POSITION = re.compile(r"\b(?:which|what\s+position|what\s+order|rank|ordinal)\b|第几|哪|何番目|몇\s?번째")
PORTUGUESE = re.compile(r"[ãõ]|\b(?:não|há|são|estão|cães|dois|duas|você|também)\b", re.I)  # "no" is "in the"
# a negation anywhere: a count beside it may be denied ("two dogs, but they are not barking")
NEGATION = re.compile(
    r"\b(?:not|never|no|none|neither|nor|nobody|isn\s+t|aren\s+t|wasn\s+t|weren\s+t|don\s+t|doesn\s+t|didn\s+t|"
    r"can\s+t|cannot|couldn\s+t|won\s+t|haven\s+t|hasn\s+t|nunca|ningun[oa]?|nadie|ni|nicht|kein\w*|nie|niemand|"
    r"pas|jamais|aucun|aucune|nao|nenhum|nenhuma|ninguem|non|mai|nessun\w*|не|ни|нет|никто|никого|никаких)\b"
    r"|没|無|无(?!论)|未(?!来)|不(?!同|断|停|久|少|过|但|仅|只|错|然|管|如|一样)"
    r"|ない|ません|なかった|않|없|못|아니|(?<![가-힣])안\s"
)
# one more of something beside the count ("two dogs bark, then another joins", "2 dogs and a puppy")
MORE = re.compile(
    r"\b(?:another|\d+\s+(?:more|other|others|additional|further|extra)|other\s+\d+|additional|a\s+further|otr[oa]s?|"
    r"outr[oa]s?|altr[oai]|noch\s+ein\w*|weitere\w*|"
    r"autres?|еще|друг(?:ая|ои|ое|ие|им|ого|ую))\b"
    r"|\d+\s+(?:[^\s\u25c6]+\s+){0,3}?(?:and|y|und|et|e|и)\s+(?:a|an|un|una|um|uma|une|ein|eine|einen)\s"
    r"|\d+\s+(?:[^\s\u25c6]+\s+){0,6}?(?:plus|as\s+well\s+as|along\s+with|together\s+with|besides|in\s+addition\s+to)"
    r"\s+(?:a|an)\s"
    r"|另|还有|又|再|もう|他に|또|다른"
)
