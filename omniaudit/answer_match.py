"""The normal form two free-form short answers are compared in (:func:`normalize`, :func:`exact_match`), for the
C3PO grader and the builders that must tell two answers apart.

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
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction

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
