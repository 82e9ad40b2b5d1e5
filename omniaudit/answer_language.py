"""The language of a free-form answer, and a phrase-by-phrase English gloss for the rule-based readers.

The readers (``data_builders.interventions.extract`` for the Thud questions, ``runners.reading`` for closed options,
``verdicts.parse_verdict`` for the grading judge) are written against English phrasings. Omni models also answer in
Spanish, Chinese, Russian or Japanese; rather than a second set of rules per language, each reader keeps a small
lexicon per language (phrase -> English phrase) and reads the gloss with its English rules. A gloss is built in one
pass, so a phrase is never translated twice, and words the lexicon does not know are left as they are: they cannot
trigger an English rule, so an answer the lexicon does not cover stays unparsed (the safe failure), never misread.

- :func:`prepare`: Unicode NFKC (full-width letters and digits, compatibility forms), typographic quotes and dashes
  to ASCII, ideographic punctuation to ASCII followed by a space;
- :func:`language`: by script first (``zh``, ``ja``, ``ko``, ``ru``, ``el``, ``ar``, ``he``, ``th``, ...), else the one
  of ``es``, ``de``, ``fr``, ``pt``, ``it`` (or of a Latin-script language no reader glosses, ``pl``, ``tr``, ``vi``,
  ...) whose function words (and letters only it uses) outnumber English ones and the others', else ``en``; a reader
  leaves a reply in a language it does not gloss unread, with that reason, rather than read it with English rules;
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
                        "《": '"', "》": '"', "\ufe0f": None, "\u20e3": None})  # "1️⃣" is 1
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
       "laut", "sagt", "aufnahme", "meine", "wahl", "hat", "deutlich", "weniger", "also", "mehr", "viel", "nur",
       "sauberer", "natürlicher", "künstlicher", "klarer", "leiser", "rauschärmer", "als", "verrauschter"}
_FR = {"le", "la", "les", "est", "sont", "et", "je", "ne", "pas", "un", "une", "des", "du", "c'est", "choisis",
       "réponse", "meilleur", "meilleure", "mieux", "premier", "première", "deuxième", "seconde", "deux", "ou",
       "mais", "oui", "non", "avec", "pour", "dans", "il", "elle", "on", "son", "vidéo", "entend", "j'entends",
       "retard", "avance", "secondes", "aucun", "aucune", "vrai", "faux", "n'est", "d'accord", "moins", "bruit",
       "fond", "dit", "de", "en", "fait", "colère", "finalement", "plutôt", "vraiment", "attends", "peut-être"}
_ES_ONLY = re.compile(r"[ñ¿¡]|[íó](?!\w*[ãõç])", re.I)  # é is French as well, á and ú Portuguese
_DE_ONLY = re.compile(r"[äöüß]", re.I)
_FR_ONLY = re.compile(r"[êûîôœë]", re.I)  # è, à, ù are Italian as well, ç Portuguese


def prepare(text: str | None) -> str:
    """NFKC, ASCII quotes and dashes, ideographic punctuation as ASCII (with a space after it)."""
    text = unicodedata.normalize("NFKC", str(text or "").translate(_PUNCT)).translate(_PUNCT)
    return _AFTER.sub(r"\1 ", text) if _CJK.search(text) else text


_VOWEL = re.compile(r"[aeiouyàáâäãåæèéêëìíîïòóôöõøœùúûüýÿ]", re.I)
# scripts by their letters; a reply in one of them is that language (or one the readers do not gloss)
_SCRIPTS = {"hangul": re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"),
            "kana": re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]"),
            "han": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
            "cyrillic": re.compile(r"[\u0400-\u04ff]"), "greek": re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]"),
            "arabic": re.compile(r"[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]"),
            "hebrew": re.compile(r"[\u0590-\u05ff]"), "thai": re.compile(r"[\u0e00-\u0e7f]"),
            "devanagari": re.compile(r"[\u0900-\u097f]"), "bengali": re.compile(r"[\u0980-\u09ff]"),
            "tamil": re.compile(r"[\u0b80-\u0bff]"), "georgian": re.compile(r"[\u10a0-\u10ff]"),
            "armenian": re.compile(r"[\u0530-\u058f]")}
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")


def _script_of(char: str) -> str | None:
    if _LATIN.match(char):
        return "latin"
    return next((name for name, letters in _SCRIPTS.items() if letters.match(char)), None)


def _mixed(word: str) -> bool:
    """A word of letters from two scripts or more ("ardeнक्ष"): token noise, never a word of a language (Japanese
    mixes kana and Han within words, and Chinese, Japanese and Korean runs hold Latin letters: "我选A")."""
    scripts = {_script_of(c) for c in word if c.isalpha()} - {None}
    if scripts & {"han", "kana", "hangul"}:  # "我选A", "B가": Latin letters sit inside CJK runs
        scripts = (scripts - {"han", "kana", "hangul", "latin"}) | {"cjk"}
    return len(scripts) > 1


def unreadable(text: str | None) -> bool:
    """Noise, not language: undecodable bytes (a replacement character anywhere but at the end, where a reply cut by
    the token limit may split a character) or a control character; neither a letter, a digit nor a symbol ("???");
    among three or more Latin words of two letters or more (acronyms and unit letters aside), fewer than half with a
    vowel ("xq zzk pwt"); among three or more words, half or more mixing scripts inside the word (a random model's
    tokens); or one word repeated four times or more. Letters of any script are language: Russian, Korean, Greek,
    Arabic, Hebrew or Thai answers are read or left unread for their language (``language``), never called noise.
    Empty text is not unreadable (it is empty: the callers' own case). Short answers stay readable: "TV", "5",
    "红色", "B and C", "2 s, 4 s", "👍".
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
    lettered = [w for w in re.findall(r"[^\W\d_]{2,}", prepare(text))]
    if len(lettered) >= 3 and sum(map(_mixed, lettered)) >= len(lettered) / 2:
        return True
    latin = [w for w in lettered if all(_LATIN.match(c) for c in w) and not w.isupper()
             and not any(c.isupper() for c in w[1:]) and w.lower() not in _UNITS]  # "SNR", "dB", "kHz", "ms"
    return len(latin) >= 3 and sum(bool(_VOWEL.search(w)) for w in latin) < len(latin) / 2


_UNITS = {"db", "dbfs", "hz", "khz", "ms", "fps", "px", "kb", "mb", "gb", "kbps", "mbps", "bpm", "st", "nd", "rd",
          "th", "vs"}
# letters that only one Latin-script language of those the readers know uses; words of languages they do not
_PT_ONLY = re.compile(r"[ãõ]", re.I)
_OTHER_LATIN = {"sv": re.compile(r"[åäö]", re.I), "da": re.compile(r"[øæ]", re.I),
                "tr": re.compile(r"[ğşıİ]"), "pl": re.compile(r"[ąęłńśźż]", re.I), "cs": re.compile(r"[řěů]", re.I),
                "ro": re.compile(r"[șțş]", re.I),
                "vi": re.compile(r"[ơưđạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", re.I)}
_OTHER_WORDS = {"pl": {"jest", "nie", "się", "wybieram", "drugie", "drugi", "pierwsze", "pierwszy", "nagranie",
                       "bardziej", "brzmi", "lepiej", "lepsze", "odpowiedź", "mówca", "jestem"},
                "nl": {"het", "een", "niet", "ik", "kies", "tweede", "eerste", "klinkt", "antwoord", "natuurlijker",
                       "dan", "spreker", "opname", "beter", "zijn", "maar", "dit", "deze", "dat", "duidelijk",
                       "misschien", "geen", "wel", "ook", "nederlands", "engels", "duits", "frans"},
                "tr": {"bir", "ve", "bu", "daha", "iyi", "ikinci", "birinci", "seçiyorum", "cevap", "değil", "çok"},
                "vi": {"là", "không", "thứ", "hai", "một", "tốt", "hơn", "chọn", "tôi", "của"},
                "sv": {"den", "det", "är", "och", "första", "andra", "har", "mindre", "jag", "väljer", "bättre",
                       "inte", "låter", "mer", "naturlig", "svaret", "ljudet", "talaren", "hör", "hörs",
                       "bakgrunden", "klippet", "skäller"},
                "id": {"yang", "adalah", "saya", "pilih", "kedua", "pertama", "lebih", "bagus", "tidak", "jawaban"}}
_PT = {"de", "o", "os", "é", "não", "eu", "diria", "do", "da", "dos", "das", "em", "um", "uma", "escolho", "melhor",
       "mais",
       "segundo", "primeiro", "áudio", "você", "está", "são", "tem", "raiva", "emoção", "resposta", "opção", "também",
       "muito", "idioma", "falado", "clipe", "ruído", "fundo", "talvez", "seja", "certeza", "nenhum", "ambos", "mas"}
_IT = {"de", "il", "è", "di", "che", "non", "sono", "della", "questo", "questa", "scelgo", "migliore", "più", "perché",
       "secondo", "primo", "gli", "lo", "parlante", "lingua", "emozione", "risposta", "sembra", "suona", "forse",
       "difficile", "dirlo", "meno", "rumore", "fondo", "anche", "molto", "ma", "oppure", "nessuno", "entrambi",
       "descrizione", "senza", "dubbio", "pulita", "pulito", "direi", "sceglierei", "appare", "persona",
       "rumoroso", "rumorosa"}


def _script_language(text: str) -> str | None:
    """The language a non-Latin script says, when letters of that script outnumber Latin ones (a Han, kana or Hangul
    character counts three: it is a syllable or a word); None for Latin text."""
    counts: dict[str, int] = {}
    for c in text:
        script = _script_of(c) if c.isalpha() else None
        if script:
            counts[script] = counts.get(script, 0) + (3 if script in ("han", "kana", "hangul") else 1)
    if counts.get("kana") and counts.get("han"):
        counts["kana"] += counts.pop("han")  # Japanese writes Han characters among its kana
    best = max(counts, key=counts.__getitem__, default="latin")
    if best == "latin" or counts[best] < counts.get("latin", 0):
        return None
    if best == "cyrillic":
        return "uk" if re.search(r"[іїєґІЇЄҐ]", text) else "ru"
    if best == "arabic":
        return "fa" if re.search(r"[پچژگ]", text) else "ar"
    return {"hangul": "ko", "kana": "ja", "han": "zh", "greek": "el", "hebrew": "he", "thai": "th",
            "devanagari": "hi", "bengali": "bn", "tamil": "ta", "georgian": "ka", "armenian": "hy"}[best]


def language(text: str) -> str:
    """The script's language where the letters are of another script than Latin (``zh``, ``ja``, ``ko``, ``ru``,
    ``el``, ``ar``, ...); else the one of ``es``, ``de``, ``fr``, ``pt``, ``it`` (or of a few languages no reader
    glosses: ``pl``, ``nl``, ``tr``, ``vi``, ...) whose function words and letters (two points each) outscore
    English's and the others'; else ``en``."""
    script = _script_language(text)
    if script:
        return script
    if re.search(r"[ğı]", text):  # letters only Turkish writes (its ü and ö are German's too)
        return "tr"
    # single letters are left out: "a" is English, but "A" and "B" are the options of every language's answer
    words = [w for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower()) if len(w) > 1 or w in ("é", "è")]
    lexicons = {"es": (_ES, _ES_ONLY), "de": (_DE, _DE_ONLY), "fr": (_FR, _FR_ONLY), "pt": (_PT, _PT_ONLY),
                "it": (_IT, None), **{lang: (_OTHER_WORDS.get(lang, set()), letters)
                                        for lang, letters in _OTHER_LATIN.items()},
                **{lang: (lexicon, None) for lang, lexicon in _OTHER_WORDS.items() if lang not in _OTHER_LATIN}}
    # a word two of them share ("la", "es", "que") is no evidence between them
    score = {lang: sum(w in lexicon and not any(w in other[0] for o, other in lexicons.items() if o != lang)
                       for w in words) + (2 * len(letters.findall(text)) if letters else 0)
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
