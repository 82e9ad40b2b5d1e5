"""The forms a label takes in a reply: its aliases and stems, the labels of its kind, and language codes.

"Surprise." is ``surprised``, "sadness" is ``sad``, "Mandarin" or "中文" is ``Mandarin Chinese``, "грусть" is ``sad``
(:func:`canonical_labels`: each surface form replaced by its option; a form two options share names neither). A
label of the options' kind that is not an option ("Cantonese" where only Mandarin Chinese is one) is found by
:func:`other_labels`, so "Chinese (Cantonese)" names no option. Where the options are languages, a code standing
alone or after a cue ("es", "Language: pt-BR") is the language it names (:func:`language_codes`).
"""

from __future__ import annotations

import re

from omniaudit.runners.choice_glosses import ALIASES as _ALIASES

SUFFIXES = ("fulness", "ness", "ful", "ity", "ed", "ing", "ly", "es", "s", "e")


def stem(word: str) -> str:
    """A light English stem: "surprised" / "surprise" -> "surpris", "happiness" / "happy" -> "happi"."""
    w = word.lower()
    for suffix in SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    return w[:-1] + "i" if w.endswith("y") else w


def label_forms(options: list[str]) -> dict[str, str]:
    """Surface form (lower case) -> option: each option, its aliases, and the stems' other common forms; a form that
    two options share names neither."""
    claims: dict[str, set[str]] = {}
    for option in options:
        key = option.lower()
        forms = {key, *_ALIASES.get(key, [])}
        if " " not in key and len(key) > 2:  # a one-letter label's stem is no label ("be" is not "B")
            forms |= {stem(key) + s for s in ("e", "ed", "ness", "ful")}  # not "-ly": "Sadly, ..." is no label
        for form in forms:
            claims.setdefault(form.lower(), set()).add(option)
    return {form: next(iter(owners)) for form, owners in claims.items() if len(owners) == 1}


def canonical_labels(text: str, options: list[str]) -> str:
    """Every surface form of an option replaced by the option itself ("Surprise." -> "surprised.")."""
    forms = label_forms(options)
    pieces = []
    for form in sorted(forms, key=len, reverse=True):
        if UNSPACED.search(form):  # Chinese, Japanese, Korean: a form is found inside a longer run of text
            pieces.append(f"({re.escape(form)})")
        elif re.search(r"[^\x00-\u024f]", form):  # Cyrillic stems: the word that starts with the stem
            pieces.append(rf"(?<!\w)({re.escape(form)})\w*")
        else:
            pieces.append(rf"(?<!\w)({re.escape(form)})(?!\w)")
    pattern = re.compile("|".join(pieces), re.I)
    def option(m: re.Match) -> str:
        form = next(g for g in m.groups() if g)
        return f" {forms[form.lower()]} " if UNSPACED.search(form) else forms[form.lower()]  # "angryいる": a word

    return pattern.sub(option, text)


UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


EMOTIONS = {"angry", "happy", "sad", "fearful", "disgust", "surprised", "calm", "neutral"}


LANGUAGES = {"english", "french", "german", "japanese", "spanish", "italian", "portuguese", "russian",
              "mandarin chinese", "cantonese", "cantonese chinese", "korean", "arabic", "hindi", "dutch", "polish",
              "turkish", "swedish"}


KINDS = (EMOTIONS, LANGUAGES, {"male", "female"})


# ISO 639 codes (a region subtag may follow: "pt-BR", "zh_CN") -> the language names an option may carry
CODES = {"en": ["english"], "eng": ["english"], "fr": ["french"], "fra": ["french"], "fre": ["french"],
          "de": ["german"], "deu": ["german"], "ger": ["german"], "ja": ["japanese"], "jpn": ["japanese"],
          "es": ["spanish"], "spa": ["spanish"], "it": ["italian"], "ita": ["italian"], "pt": ["portuguese"],
          "por": ["portuguese"], "ru": ["russian"], "rus": ["russian"],
          "zh": ["mandarin chinese", "chinese", "mandarin"], "cmn": ["mandarin chinese", "mandarin", "chinese"],
          "zho": ["mandarin chinese", "chinese", "mandarin"],
          "yue": ["cantonese", "cantonese chinese"], "ko": ["korean"], "kor": ["korean"], "ar": ["arabic"],
          "ara": ["arabic"], "hi": ["hindi"], "hin": ["hindi"], "nl": ["dutch"], "nld": ["dutch"], "pl": ["polish"],
          "pol": ["polish"], "tr": ["turkish"], "tur": ["turkish"], "sv": ["swedish"], "swe": ["swedish"]}


CODE = r"([A-Za-z]{2,3})(?:[-_][A-Za-z]{2}|[-_]\d{3}|[-_][A-Z][a-z]{3})?"


CODE_ALONE = re.compile(rf"^\W*{CODE}\W*$")


CODE_CUE = re.compile(rf"(?i:(?:\b(?:language|lang|code|answer|label|prediction)(?:\s+code)?|语言代码|语言|代码)\s*"
                       rf"[:=]\s*[\"']?){CODE}"
                       r"(?![\w-])")


def language_codes(text: str, options: list[str]) -> str:
    """A language code standing alone or after a cue ("es", "Language: pt-BR") as the option it names, before the
    Spanish gloss reads "es" as "it is"; elsewhere a two-letter word is a word ("it", "de")."""
    names = {o.lower(): o for o in options}

    def option(m: re.Match) -> str:
        found = next((names[n] for n in CODES.get(m.group(1).lower(), []) if n in names), None)
        return m.group(0) if found is None else m.group(0)[: m.start(1) - m.start()] + found

    if not any(n in LANGUAGES or n in ("chinese", "mandarin") for n in names):
        return text
    alone = CODE_ALONE.match(text)
    if alone:
        found = next((names[n] for n in CODES.get(alone.group(1).lower(), []) if n in names), None)
        return found or text
    return CODE_CUE.sub(option, text)


def other_labels(options: list[str]) -> re.Pattern | None:
    """Labels of the options' kind that are not options ("Cantonese" where the options hold Mandarin Chinese only),
    by forms no option claims."""
    lowered = {o.lower() for o in options}
    kind = next((k for k in KINDS if lowered & k), set())
    claimed = set(label_forms(options))
    forms = {f for label in kind - lowered for f in (label, *_ALIASES.get(label, [])) if f.lower() not in claimed}
    if not forms:
        return None
    return re.compile("|".join(rf"(?<!\w){re.escape(f)}(?!\w)" for f in sorted(forms, key=len, reverse=True)), re.I)
