"""The language of a free-form answer, and a phrase-by-phrase English gloss for the rule-based readers.

The readers (``evaluation.extract`` for the Thud questions, ``judges.items.parse_answer`` for closed options,
``grading.parse_verdict`` for the grading judge) are written against English phrasings. Omni models also answer in
Spanish or Chinese; rather than a second set of rules per language, each reader keeps a small lexicon per language
(phrase -> English phrase) and reads the gloss with its English rules. A gloss is built in one pass, so a phrase is
never translated twice, and words the lexicon does not know are left as they are: they cannot trigger an English
rule, so an answer the lexicon does not cover stays unparsed (the safe failure), never misread.

- :func:`prepare`: Unicode NFKC (full-width letters and digits, compatibility forms), typographic quotes and dashes
  to ASCII, ideographic punctuation to ASCII followed by a space;
- :func:`language`: ``zh`` when the answer holds CJK characters, else the one of ``es``, ``de``, ``fr`` whose function
  words (and letters only it uses) outnumber English ones and the other two, else ``en``;
- :class:`Gloss`: a lexicon compiled into one alternation (Chinese: longest phrase first, no word boundaries;
  Spanish: in the order given, whole words, any case);
- :func:`unreadable`: text that is no language at all (a random or broken model's byte noise), which no reader
  should take for an answer.
"""

from __future__ import annotations

import re
import unicodedata

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_PUNCT = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "∼": "~", "。": ". ", "、": ", ",
                        "，": ", ", "：": ": ", "；": "; ", "！": "! ", "？": "? ", "（": " (", "）": ") ",
                        "「": '"', "」": '"', "«": '"', "»": '"', "『": '"', "』": '"', "【": "(", "】": ")",
                        "《": '"', "》": '"'})
_AFTER = re.compile(r"([,.;:!?])(?=[^\s\d,.;:!?'\")\]])")  # "同步,声音" -> "同步, 声音" (not "1,5" or "2.0")
# words only Spanish uses ("no", "audio", "a" are both languages'): function words, and the words of short answers
_ES = {"el", "la", "los", "las", "es", "está", "están", "son", "hay", "que", "de", "del", "un", "una", "y", "con",
       "por", "pero", "se", "lo", "muy", "más", "sí", "al", "en", "su", "sus", "esta", "este", "oye", "suena",
       "respuesta", "opción", "segunda", "segundo", "primera", "primero", "elijo", "sonido", "vídeo", "sincronizado",
       "sincronizada", "sincronizados", "desincronizado", "desincronizados", "silencio", "silencioso", "retraso",
       "prefiero", "etiqueta", "dice", "oigo", "escucho", "aunque", "creo", "grabación", "feliz", "enojado",
       "retrasado", "adelantado", "mudo", "ninguno", "ninguna", "ambos", "mejor", "ruido", "música", "imagen"}
_EN = {"the", "is", "are", "a", "an", "and", "of", "to", "with", "it", "this", "there", "i", "in", "on", "by", "be",
       "was", "has", "sound", "sounds", "video", "clip", "one", "answer", "option", "yes", "at"}
_DE = {"der", "die", "das", "den", "dem", "des", "ist", "sind", "und", "nicht", "ich", "ein", "eine", "einen", "es",
       "mit", "auf", "für", "wähle", "nehme", "antwort", "besser", "klingt", "beide", "keine", "keiner", "oder",
       "aber", "weil", "auch", "erste", "erster", "zweite", "zweiter", "ja", "nein", "ton", "bild", "gibt", "hört",
       "höre", "man", "sekunden", "verzögert", "zu", "spät", "früh", "stimmt", "richtig", "falsch", "bevorzuge",
       "laut", "sagt", "aufnahme", "meine", "wahl"}
_FR = {"le", "la", "les", "est", "sont", "et", "je", "ne", "pas", "un", "une", "des", "du", "c'est", "choisis",
       "réponse", "meilleur", "meilleure", "mieux", "premier", "première", "deuxième", "seconde", "deux", "ou",
       "mais", "oui", "non", "avec", "pour", "dans", "il", "elle", "on", "son", "vidéo", "entend", "j'entends",
       "retard", "avance", "secondes", "aucun", "aucune", "vrai", "faux", "n'est", "d'accord"}
_ES_ONLY = re.compile(r"[áíóúñ¿¡]", re.I)  # é is French as well
_DE_ONLY = re.compile(r"[äöüß]", re.I)
_FR_ONLY = re.compile(r"[èêàçùûîôœë]", re.I)


def prepare(text: str | None) -> str:
    """NFKC, ASCII quotes and dashes, ideographic punctuation as ASCII (with a space after it)."""
    text = unicodedata.normalize("NFKC", str(text or "").translate(_PUNCT)).translate(_PUNCT)
    return _AFTER.sub(r"\1 ", text) if _CJK.search(text) else text


_VOWEL = re.compile(r"[aeiouyàáâäãåæèéêëìíîïòóôöõøœùúûüýÿ]", re.I)


def unreadable(text: str | None) -> bool:
    """Noise, not language: undecodable bytes (a replacement character anywhere but at the end, where a reply cut by
    the token limit may split a character) or a control character; neither a letter, a digit nor a symbol ("???");
    or, among three or more Latin words of two letters or more (acronyms and unit letters aside), fewer than half
    with a vowel ("xq zzk pwt"); or one word repeated four times or more. Empty text is not unreadable (it is empty:
    the callers' own case). Short answers stay readable: "TV", "5", "红色", "B and C", "2 s, 4 s", "👍".
    """
    text = str(text or "").rstrip().rstrip("\ufffd")
    if not text.strip():
        return False
    if "\ufffd" in text or any(unicodedata.category(c) == "Cc" and c not in "\n\r\t" for c in text):
        return True
    if not any(c.isalnum() or unicodedata.category(c) in ("So", "Sk") for c in text):
        return True
    words = re.findall(r"\w+", text.lower())
    if len(words) >= 4 and len(set(words)) == 1:
        return True  # a degenerate model's one token, repeated ("the the the the")
    latin = [w for w in re.findall(r"[^\W\d_]{2,}", prepare(text)) if not _CJK.search(w) and not w.isupper()]
    return len(latin) >= 3 and sum(bool(_VOWEL.search(w)) for w in latin) < len(latin) / 2


def language(text: str) -> str:
    """``zh`` (CJK characters); else ``es``, ``de`` or ``fr`` when its function words and letters (two points each)
    outscore English's and the other two's; else ``en``."""
    if _CJK.search(text):
        return "zh"
    # single letters are left out: "a" is English, but "A" and "B" are the options of every language's answer
    words = [w for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower()) if len(w) > 1]
    lexicons = {"es": (_ES, _ES_ONLY), "de": (_DE, _DE_ONLY), "fr": (_FR, _FR_ONLY)}
    # a word two of them share ("la", "es", "que") is no evidence between them
    score = {lang: sum(w in lexicon and not any(w in other[0] for o, other in lexicons.items() if o != lang)
                       for w in words) + 2 * len(letters.findall(text))
             for lang, (lexicon, letters) in lexicons.items()}
    best = max(score, key=score.__getitem__)
    rival = max(v for lang, v in score.items() if lang != best)
    return best if score[best] > max(rival, sum(w in _EN for w in words)) else "en"


class Gloss:
    """A lexicon ``[(phrase, english), ...]`` applied in one pass. ``cjk``: phrases are plain text matched anywhere,
    longest first; otherwise they are regular expressions matched as whole words, in the order given, any case."""

    def __init__(self, lexicon: list[tuple[str, str]], cjk: bool = False) -> None:
        entries = sorted(lexicon, key=lambda e: -len(e[0])) if cjk else lexicon
        self.english = [e for _, e in entries]
        parts = [f"(?P<g{i}>{re.escape(p) if cjk else p})" for i, (p, _) in enumerate(entries)]
        body = "|".join(parts)
        self.pattern = re.compile(body if cjk else rf"(?<![\w])(?:{body})(?![\w])", re.I)

    def __call__(self, text: str) -> str:
        def english(m: re.Match) -> str:
            return f" {self.english[int(str(m.lastgroup)[1:])]} "

        text = re.sub(r"[ \t]{2,}", " ", self.pattern.sub(english, text))
        return re.sub(r"[ \t]+(?=[.,;:!?)](?:\s|$))|(?<=\()[ \t]+", "", text).strip()


def gloss(text: str, glosses: dict[str, Gloss]) -> tuple[str, str]:
    """``(language, English gloss)`` of a prepared answer; English answers are returned unchanged."""
    lang = language(text)
    return lang, glosses[lang](text) if lang in glosses else text
