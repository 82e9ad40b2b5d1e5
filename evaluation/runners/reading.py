"""How a free-form answer names an option of a closed item (``parse_answer``, re-exported by ``judges.items``).

Option sets: two ordinal slots (``A``/``B`` or ``1``/``2``, pairwise judging) or a label set (emotions, languages,
...). The rules, in order:

* the answer is prepared: Unicode NFKC (full-width ``Ｂ`` is ``B``), markup removed, and a Spanish or Chinese answer
  glossed into English phrase by phrase (``omniaudit.evaluation.answer_language``: "Respuesta: B" is "answer: B",
  "答案是A" is "the answer is A", "la segunda" is "the second", "第二个" is "the second");
* ordinal references name a slot where the options are A/B or 1/2: "the first/second one", "the former/latter",
  "Audio 1/2", "clip 2", "Description A", "option (B)", and, for 1/2 sets, a bare 1 or 2 that is not a quantity
  ("at 2 seconds" is not option 2);
* explicit choices name an option: a cue ("Answer: B", "my choice is clip B", "if forced: A"), a choice verb ("I
  choose B", "I'd go with B"), a conclusion ("..., so B."), an attribute-free verdict ("B is better", "clip A is
  the better one"), a sentence or line that is only the option ("B.", "I think clip B."), or an answer that leads
  with it ("B - it has less hiss", "Angry, not sad"); when several are present, the LAST one wins (a final answer
  after reasoning);
* comparatives of the judged attribute only describe ("Clip A is noisier than clip B", "B is cleaner"): without the
  question the parser cannot tell "B is cleaner" from "B is noisier", so they name no choice (unparsed) unless an
  explicit choice follows. Given the ``question``, a statement whose comparative predicate is the question's own
  ("The first clip has less background noise." to "Which clip has cleaner audio, with less background noise?")
  answers it; any word the question does not use ("more noise", "noisier") leaves it unread;
* a negated ("not A", "I wouldn't pick B") or coordinated ("A or B", "neither A nor B", "happy/sad") mention names
  nothing; a label-set answer without an explicit choice names the option only if it is the one option mentioned
  (negated mentions aside);
* a label is named by its own words or their stems and aliases ("Surprise." is ``surprised``, "sadness" is
  ``sad``, "Mandarin" or "中文" is ``Mandarin Chinese``, "español" is ``Spanish``); a form that would name two of the
  options names neither.

None is the safe failure: an empty, off-topic or hedged answer, a refusal or the question echoed back names nothing.
"""

from __future__ import annotations

import re

from omniaudit.evaluation.answer_language import Gloss, language, prepare

_MARKUP = re.compile(r"[*`#]|(?<!\w)_+|_+(?!\w)")  # emphasis marks; underscores inside words ("audio_described") stay
_SLOT = r"(?:clip|option|candidate|slot|sample|recording|audio|response|description)"
_LETTER_REF = rf"(?:(?i:{_SLOT})\s*)?\(?\b([AB])\b\)?"  # the letter is case-sensitive: "a bit" is not slot A
_HEDGE = (r"(?:i\s+think|i\s+believe|i'?d\s+say|i\s+would\s+say|i\s+guess|probably|definitely|clearly|likely|"
          r"certainly|obviously|surely|it'?s|it\s+is|that'?s|that\s+is|(?:(?:my|the)\s+)?(?:final\s+)?answer"
          r"(?:\s+is)?)")
_CONCLUDE = (r"(?i:\b(?:so|thus|therefore|hence|overall|ultimately|finally|in\s+conclusion|in\s+summary|"
             rf"to\s+conclude)\b\s*[,:]?\s*(?:{_HEDGE}\s*[:,]?\s*)?)")
_END = r"(?=[^\w\n]*(?:\n|$)|\s*[.!;,)\]])"  # the option ends its clause
_NEGATED = re.compile(r"(?i:(?:\bnot|n't|\bnever|\bno|\bwithout)\s+(?:\w+\s+)?)$")
_SENTENCE = re.compile(r"[^.!?;\n]+[.!?;]*")
_FORCED = (r"if\s+(?:i'?m\s+|i\s+am\s+|i\s+was\s+)?forced(?:\s+to\s+(?:choose|pick|answer|decide))?|"
           r"if\s+i\s+(?:had|have|must|need)\s+to\s+(?:choose|pick|say|answer|decide)|forced\s+to\s+choose|"
           r"leaning\s+(?:towards?|to)|i'?d\s+lean\s+(?:towards?|to)")
_AB_CUE = (r"(?i:\b(?:answer|choice|verdict|decision|pick|selection|preference|winner|"
           rf"(?:better|preferred)\s+(?:one|clip|option|candidate|sample|recording)|{_FORCED})\b(?:\s+(?:is|would\s+be|"
           r"will\s+be|goes\s+to))?(?:\s+for)?\s*[:=\-\u2013,]?\s*)")
_AB_VERB = (r"(?i:\b(?:choose|chose|choosing|pick|picked|picking|select|selected|selecting|prefer|preferred|"
            r"go\s+with|going\s+with|went\s+with|opt\s+for|vote\s+for|recommend)\s+)")
_AB_GOOD = (r"(?i:\s+(?:wins\b|(?:is|was|sounds|seems|would\s+be)\s+(?:(?:clearly|much|slightly|definitely|"
            r"somewhat|far|overall|the|a\s+bit)\s+)*(?:better|best|preferred|preferable|superior|the\s+winner|"
            r"(?:my|the)\s+(?:choice|pick|answer)|correct)\b))")
_LABEL_CUE = (r"(?i:\b(?:answer|label|verdict|choice|prediction|classification|category|class|emotion|language|"
              rf"{_FORCED})\b(?:\s+(?:is|would\s+be|will\s+be))?\s*[:=\-\u2013,]?\s*)")
_LABEL_VERB = (r"(?i:\b(?:choose|chose|pick|picked|select|selected|go\s+with|going\s+with|"
               r"(?:classify|label|identify|classified|labelled|labeled|identified)(?:\s+(?:it|this|the\s+\w+))?"
               r"\s+as)\s+)")
_NOT_CLAUSE = r"(?!\s*(?i:which|with|that|whose|who)\b)"  # "A, which hisses, is noisier" does not lead with A
_ITS = r"(?i:\b(?:it'?s|it\s+is|that'?s|that\s+is)\s+)"  # "..., it's B."

# ------------------------------------------------------------------------------ Spanish and Chinese choice words
_ES_CHOICE = Gloss([
    (r"(?:la|mi) respuesta(?: final| correcta)? es", "the answer is"), (r"respuesta(?: final| correcta)?", "answer"),
    (r"(?:mi )?elecci[oó]n(?: final)? es", "my choice is"), (r"elecci[oó]n", "choice"),
    (r"(?:yo )?(?:elijo|escojo|selecciono|elegir[ií]a|escoger[ií]a|me quedo con|me quedar[ií]a con|opto por|"
     r"voto por|me decanto por)", "I choose"), (r"prefiero|preferir[ií]a", "I prefer"),
    (r"si (?:tuviera|tengo) que (?:elegir|escoger|decidir)|si me obligan(?: a elegir)?|obligad[oa] a elegir",
     "if forced"),
    (r"(?:es|suena|parece|son|suenan) (?:mucho |claramente |ligeramente |un poco )?mejor(?:es)?", "is better"),
    (r"mejor", "better"), (r"(?:el|la) primer[oa]?|el primer", "the first"), (r"(?:el|la) segund[oa]", "the second"),
    (r"primer[oa]?", "first"), (r"segund[oa]", "second"), (r"opci[oó]n", "option"), (r"grabaci[oó]n", "recording"),
    (r"muestra", "sample"), (r"fragmento|clip", "clip"), (r"descripci[oó]n", "description"),
    (r"candidat[oa]", "candidate"), (r"audio|pista", "audio"),
    (r"menos ruido de fondo", "less background noise"), (r"menos ruido", "less noise"),
    (r"m[aá]s ruido", "more noise"),
    (r"m[aá]s limpi[oa]s?", "cleaner"), (r"m[aá]s clar[oa]s?", "clearer"), (r"m[aá]s natural(?:es)?", "more natural"),
    (r"m[aá]s fiel(?:es)?", "more faithful"), (r"la misma persona", "the same person"), (r"suenan?", "sounds"),
    (r"tiene", "has"), (r"m[aá]s", "more"), (r"menos", "less"), (r"ninguno|ninguna", "neither"), (r"ni", "nor"),
    (r"ambos|ambas|los dos|las dos", "both"), (r"o", "or"), (r"y", "and"), (r"pero|aunque", "but"),
    (r"no lo s[eé]|no s[eé]", "I don't know"), (r"no estoy segur[oa]", "I am not sure"), (r"no(?=\s*,)", "no"),
    (r"no es", "it is not"), (r"no son", "they are not"), (r"no", "not"), (r"es", "it is"),
    (r"la|el|los|las|lo", "the"), (r"uno", "one"), (r"dos", "two"),
    (r"que", "than"), (r"igual(?:es)?", "the same"),
])
_ZH_CHOICE = Gloss([
    ("答案是", "the answer is"), ("答案为", "the answer is"), ("答案", "answer"), ("我的选择是", "my choice is"),
    ("我选择", "I choose"), ("我选", "I choose"), ("选择", "choose"), ("选", "choose"), ("我更喜欢", "I prefer"),
    ("更喜欢", "prefer"), ("偏好", "prefer"), ("如果必须选", "if forced"), ("如果一定要选", "if forced"),
    ("非要选的话", "if forced"), ("选项", "option"), ("音频", "audio"), ("录音", "recording"), ("片段", "clip"),
    ("样本", "sample"), ("描述", "description"), ("候选", "candidate"), ("第一个", "the first"),
    ("第一段", "the first"), ("第一条", "the first"), ("第一", "the first"), ("第二个", "the second"),
    ("第二段", "the second"), ("第二条", "the second"), ("第二", "the second"), ("前者", "the former"),
    ("后者", "the latter"), ("更好", "is better"), ("比较好", "is better"), ("较好", "is better"),
    ("最好", "is best"), ("更佳", "is better"), ("更优", "is better"), ("更干净", "is cleaner"),
    ("更清晰", "is clearer"), ("更自然", "is more natural"), ("听起来", "sounds"),
    ("背景噪音更少", "has less background noise"), ("噪音更少", "has less noise"), ("噪音更小", "has less noise"),
    ("噪音更多", "has more noise"), ("更忠实", "is more faithful"), ("同一个人", "the same person"),
    ("或者", "or"), ("或", "or"), ("还是", "or"), ("和", "and"), ("与", "and"), ("跟", "and"), ("都不", "neither"),
    ("都", "both"), ("两个", "both"), ("不是", "not"), ("不选", "would not choose"), ("不", "not"),
    ("无法判断", "I cannot tell"), ("不确定", "I am not sure"), ("不知道", "I don't know"),
    ("说不准", "I cannot tell"),
    ("我", "I"), ("是", "is"), ("的", ""), ("了", ""), ("很", ""), ("吧", ""),
], cjk=True)
_CHOICE_GLOSSES = {"es": _ES_CHOICE, "zh": _ZH_CHOICE}

# ------------------------------------------------------------------------------------- ordinal slots (A/B, 1/2)
_SLOT_NOUN = r"(?:one|clip|audio|option|sample|recording|candidate|description|response|track|file|version|choice)"
_ORDINAL = {"first": "A", "former": "A", "second": "B", "latter": "B", "one": "A", "two": "B", "1": "A", "2": "B",
            "a": "A", "b": "B"}
# "the first clip", "second one", "the latter" (then a verb or the end of the clause), "Audio 2", "clip (1)", "#2"
_ORDINAL_NOUN = re.compile(rf"(?i:\b(?:the\s+)?(first|second|former|latter)\s+{_SLOT_NOUN}\b)(?!\s*\(?[AB12]\b)")
_ORDINAL_BARE = re.compile(r"(?i:\bthe\s+(first|second|former|latter)\b)(?=\s*(?:[.,;:!?)]|$|(?i:is|was|sounds?|"
                           r"seems?|has|had|wins|would|does|did|appears?|clearly|definitely|for\s+sure|please|"
                           r"because|since|as|over)\b))")
_ORDINAL_ALONE = re.compile(r"(?i:^(\W*)(first|second)(?=\W*$))")
_SLOT_NUMBER = re.compile(rf"(?i:\b(?:the\s+)?(?:{_SLOT}|track|number|no\.|#)\s*\(?\s*(1|2|one|two)\b\)?)(?![.,]\d)|"
                          rf"(?i:#)\s*(1|2)\b(?![.,]\d)")
_QUANTITY = (r"(?i:\s*(?:s|sec|secs|seconds?|ms|msec|minutes?|min|mins|hours?|h|times?|db|hz|khz|x|%|/|:|\.\d|,\d|"
             r"st|nd|rd|th|star|stars|points?|of|out))\b|\s*[%:/]")
_BARE_DIGIT = re.compile(rf"(?<![\w.,/#-])(?<!\d:)([12])(?![\w%/]|[.,]\d)(?!{_QUANTITY})")


def _ordinals(text: str, digits: bool) -> str:
    """Ordinal references as slot letters: "the second one" -> "clip B", "Audio 1" -> "clip A" (and, for a 1/2 set,
    a bare 1 or 2 that is not a quantity -> A / B)."""
    if digits:
        text = re.sub(r"\b([AB])\b", lambda m: m.group(1).lower(), text)  # letters name nothing in a 1/2 set
    text = _SLOT_NUMBER.sub(lambda m: f"clip {_ORDINAL[(m.group(1) or m.group(2)).lower()]}", text)
    text = _ORDINAL_NOUN.sub(lambda m: f"clip {_ORDINAL[m.group(1).lower()]}", text)
    text = _ORDINAL_BARE.sub(lambda m: f"clip {_ORDINAL[m.group(1).lower()]}", text)
    text = "\n".join(_ORDINAL_ALONE.sub(lambda m: f"{m.group(1)}clip {_ORDINAL[m.group(2).lower()]}", line)
                     for line in text.split("\n"))
    if digits:
        text = _BARE_DIGIT.sub(lambda m: _ORDINAL[m.group(1)], text)
    return re.sub(r"(?i:\bthe\s+)(?=(?:clip\s+)?\(?[AB]\b)", "", text)  # "the B" (Spanish "la B") is B


# a statement about one slot whose predicate is the question's own ("clip A has less background noise")
_VERB = r"(?:is|was|has|had|have|sounds?|seems?|appears?|contains?|gives?|offers?|feels?|comes?\s+across\s+as)"
_PREDICATE = re.compile(rf"{_LETTER_REF}\s+(?:{_VERB}\s+)?(?P<pred>[^.;!?,\n]*?)(?=\s*(?:[.;!?,\n]|$|"
                        r"(?i:than|because|since|but|while|whereas|as|though|although)\b))")
_FILLER = {"is", "was", "the", "a", "an", "much", "slightly", "clearly", "definitely", "noticeably", "overall",
           "very", "far", "bit", "somewhat", "considerably", "significantly", "by", "audio", "clip", "sound", "one",
           "with", "to", "of", "its", "it", "and", "also", "still", "even", "just", "quite", "way", "lot"}
_NOT_COMPARATIVE = {"reference", "speaker", "number", "other", "either", "neither", "whether", "rather", "together",
                    "after", "ever", "never", "over", "under", "answer", "order", "water", "player", "listener",
                    "power", "later", "paper", "user", "letter", "filter", "computer", "character"}
_COMPARATIVE = {"more", "less", "fewer", "most", "least", "same", "better", "best", "worse", "worst", "closer"}


def _question_choices(text: str, question: str | None) -> list[tuple[int, int, str]]:
    """Spans of statements that answer ``question`` in its own comparative words (see the module docstring)."""
    if not question:
        return []
    asked = set(re.findall(r"[a-z]+", _MARKUP.sub("", prepare(question)).lower()))
    found = []
    for m in _PREDICATE.finditer(text):
        words = [w for w in re.findall(r"[a-z']+", m.group("pred").lower()) if w not in _FILLER]
        comparative = [w for w in words if w in _COMPARATIVE or (w.endswith("er") and len(w) > 4
                                                                   and w not in _NOT_COMPARATIVE)]
        if words and comparative and all(w in asked for w in words):
            found.append((m.start(1), m.end(1), m.group(1)))
    return found


# --------------------------------------------------------------------------------------- label stems and aliases
_ALIASES = {  # option (lower case) -> other words that name it (English, Spanish, Chinese)
    "angry": ["anger", "angrily", "mad", "furious", "enojado", "enojada", "enfadado", "enfadada", "ira", "enojo",
              "rabia", "生气", "愤怒", "恼怒"],
    "happy": ["happiness", "joy", "joyful", "cheerful", "glad", "feliz", "alegre", "alegría", "felicidad", "开心",
              "高兴", "快乐", "喜悦"],
    "sad": ["sadness", "sorrow", "unhappy", "triste", "tristeza", "悲伤", "难过", "伤心"],
    "fearful": ["fear", "afraid", "scared", "frightened", "miedo", "temeroso", "temerosa", "asustado", "asustada",
                "恐惧", "害怕"],
    "disgust": ["disgusted", "disgusting", "asco", "disgustado", "disgustada", "asqueado", "asqueada", "厌恶", "恶心"],
    "surprised": ["surprise", "astonished", "sorpresa", "sorprendido", "sorprendida", "惊讶", "惊奇", "吃惊"],
    "calm": ["calmness", "calmly", "tranquil", "calma", "tranquilo", "tranquila", "calmado", "calmada", "平静",
             "冷静"],
    "neutral": ["neutrality", "neutro", "neutra", "中性", "中立"],
    "english": ["inglés", "ingles", "英语", "英文"],
    "french": ["français", "francés", "frances", "法语", "法文"],
    "german": ["deutsch", "alemán", "aleman", "德语", "德文"],
    "japanese": ["日本語", "japonés", "japones", "日语", "日文"],
    "spanish": ["español", "espanol", "castellano", "castilian", "西班牙语", "西班牙文"],
    "italian": ["italiano", "意大利语"],
    "portuguese": ["português", "portugués", "portugues", "葡萄牙语"],
    "russian": ["русский", "ruso", "俄语", "俄文"],
    "mandarin chinese": ["mandarin", "chinese", "chino", "chino mandarín", "chino mandarin", "mandarín", "中文",
                         "普通话", "汉语", "国语", "华语"],
    "cantonese": ["chinese", "粤语", "广东话", "cantonés"],
    "cantonese chinese": ["cantonese", "chinese", "粤语", "广东话", "cantonés"],
    "korean": ["한국어", "coreano", "韩语", "朝鲜语"],
    "arabic": ["العربية", "árabe", "arabe", "阿拉伯语"],
    "hindi": ["हिन्दी", "हिंदी", "印地语"],
    "dutch": ["nederlands", "neerlandés", "holandés", "荷兰语"],
    "polish": ["polski", "polaco", "波兰语"],
    "turkish": ["türkçe", "turco", "土耳其语"],
    "swedish": ["svenska", "sueco", "瑞典语"],
    "male": ["man", "masculine", "hombre", "masculino", "男性", "男"],
    "female": ["woman", "feminine", "mujer", "femenino", "女性", "女"],
}
_SUFFIXES = ("fulness", "ness", "ful", "ity", "ed", "ing", "ly", "es", "s", "e")


def _stem(word: str) -> str:
    """A light English stem: "surprised" / "surprise" -> "surpris", "happiness" / "happy" -> "happi"."""
    w = word.lower()
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    return w[:-1] + "i" if w.endswith("y") else w


def _label_forms(options: list[str]) -> dict[str, str]:
    """Surface form (lower case) -> option: each option, its aliases, and the stems' other common forms; a form that
    two options share names neither."""
    claims: dict[str, set[str]] = {}
    for option in options:
        key = option.lower()
        forms = {key, *_ALIASES.get(key, [])}
        if " " not in key:
            forms |= {_stem(key) + s for s in ("e", "ed", "ness", "ful")}  # not "-ly": "Sadly, ..." is no label
        for form in forms:
            claims.setdefault(form.lower(), set()).add(option)
    return {form: next(iter(owners)) for form, owners in claims.items() if len(owners) == 1}


def _canonical_labels(text: str, options: list[str]) -> str:
    """Every surface form of an option replaced by the option itself ("Surprise." -> "surprised.")."""
    forms = _label_forms(options)
    pieces = []
    for form in sorted(forms, key=len, reverse=True):
        edge = "" if re.search(r"[^\x00-\u024f]", form) else r"(?<!\w)"
        pieces.append(rf"{edge}{re.escape(form)}" + ("" if edge == "" else r"(?!\w)"))
    pattern = re.compile("|".join(pieces), re.I)
    return pattern.sub(lambda m: forms[m.group(0).lower()], text)


# ---------------------------------------------------------------------------------------------------- reading
def _sentence_choices(text: str, ref: str) -> list[tuple[int, int, str]]:
    """Sentences (or lines) that are only the option, possibly hedged: "B.", "I think clip B.", "Answer: sad"."""
    bare = re.compile(rf"\W*(?i:{_HEDGE}\W+)*{ref}[^\w]*")
    found = []
    for sentence in _SENTENCE.finditer(text):
        m = bare.fullmatch(sentence.group())
        if m:
            found.append((sentence.start() + m.start(1), sentence.start() + m.end(1), m.group(1)))
    return found


def _excluded(text: str, start: int, end: int, coord_ref: str) -> bool:
    """A negated or coordinated mention ("not A", "A or B", "neither A nor B", "happy/sad") names no choice."""
    before, after = text[:start], text[end:]
    if _NEGATED.search(before):
        return True
    joint = r"(?:[/&]|(?i:\b(?:or|and|nor|vs\.?|versus|between|either|neither|both)\b))"
    if re.search(rf"{joint}\s*(?:(?i:{_SLOT})\s*)?\(?$", before) or re.search(rf"{coord_ref}\)?\s*,\s*\(?$", before):
        return True
    return bool(re.match(rf"\)?\s*(?:[/&,]|(?i:(?:or|and|nor|vs\.?|versus)\b))\s*{coord_ref}", after))


def _last_choice(text: str, patterns: list[re.Pattern], ref: str, coord_ref: str,
                 extra: list[tuple[int, int, str]] = ()) -> str | None:
    """The option of the last explicit choice that is neither negated nor coordinated."""
    spans = [(m.start(1), m.end(1), m.group(1)) for p in patterns for m in p.finditer(text)]
    spans += _sentence_choices(text, ref) + list(extra)
    spans = [s for s in spans if not _excluded(text, s[0], s[1], coord_ref)]
    return max(spans)[2] if spans else None


def _parse_letter(text: str, question: str | None = None) -> str | None:
    coord = rf"(?:(?i:{_SLOT})\s*)?\(?\b[AB]\b"
    patterns = [re.compile(_AB_CUE + _LETTER_REF), re.compile(_AB_VERB + _LETTER_REF),
                re.compile(_CONCLUDE + _LETTER_REF + _END), re.compile(_ITS + _LETTER_REF + _END),
                re.compile(_LETTER_REF + _AB_GOOD),
                re.compile(rf"^\W*\(?\b([AB])\b\)?(?=\s*(?:[.)!;]|[-\u2013]\s|,{_NOT_CLAUSE}|$))")]
    # "A: ..." leads only when it is not the first of per-clip headers ("A: noisy. B: clean.")
    headers = set(re.findall(rf"(?:^|\n|[.;]\s+)\W*(?:(?i:{_SLOT})\s*)?\(?\b([AB])\b\)?\s*:", text))
    if len(headers) < 2:
        patterns.append(re.compile(r"^\W*\(?\b([AB])\b\)?(?=\s*:)"))
    return _last_choice(text, patterns, _LETTER_REF, coord, _question_choices(text, question))


def _parse_label(text: str, options: list[str]) -> str | None:
    by_lower = {o.lower(): o for o in options}
    text = _canonical_labels(text, options)
    lowered = text.lower().strip(" \t\n.\"'`*:!")
    if lowered in by_lower:
        return by_lower[lowered]
    alternation = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    ref = rf"(?i:(?<!\w)({alternation})(?!\w))"
    coord = rf"(?i:(?<!\w)(?:{alternation})(?!\w))"
    patterns = [re.compile(_LABEL_CUE + ref), re.compile(_LABEL_VERB + ref), re.compile(_CONCLUDE + ref + _END),
                re.compile(_ITS + ref + _END),
                re.compile(rf"^\W*{ref}(?=\s*(?:[.)!;:]|[-\u2013]\s|,{_NOT_CLAUSE}|$))")]
    choice = _last_choice(text, patterns, ref, coord)
    if choice is not None:
        return by_lower[choice.lower()]
    mentions = list(re.finditer(ref, text))
    if any(_excluded(text, m.start(1), m.end(1), coord) and not _NEGATED.search(text[:m.start(1)])
           for m in mentions):
        return None  # "happy/sad", "angry or sad": more than one option offered
    named = {m.group(1).lower() for m in mentions if not _NEGATED.search(text[:m.start(1)])}
    return by_lower[named.pop()] if len(named) == 1 else None


def _english(raw: str) -> str:
    text = _MARKUP.sub("", prepare(raw)).strip()
    lang = language(text)
    return _CHOICE_GLOSSES[lang](text) if lang in _CHOICE_GLOSSES else text


def parse_answer(raw: str, options: list[str], question: str | None = None) -> str | None:
    """The option a free-form answer names, or None (empty, a refusal, none or several options named, a comparison
    without a choice). A final explicit choice wins over earlier mentions; ``question`` (the item's prompt) lets a
    statement in the question's own comparative words answer it. See the module docstring."""
    text = _english(raw or "")
    if not text or not options:
        return None
    if sorted(options) in (["A", "B"], ["1", "2"]):
        digits = sorted(options) == ["1", "2"]
        letter = _parse_letter(_ordinals(text, digits), question)
        return None if letter is None else {"A": "1", "B": "2"}[letter] if digits else letter
    return _parse_label(text, options)


def agreeing_probs(raw: object, label: str | None, probs: dict | None,
                   sampled: bool = False) -> tuple[dict | None, str | None]:
    """The option probabilities an answer may be read by, and why not when they are dropped.

    Probabilities and text must agree; the text wins. They count when the runner scored the options without writing
    (empty text) or when the text names the option they favour. When the text names no option (``unread``: "A or B?
    Neither is accurate.") they are dropped: a text-less probability is never read as the model's answer. When it
    names another one (``conflict``) they are dropped under greedy decoding, where the text is the model's most
    likely answer, so a disagreement is a misreading; a ``sampled`` text is one draw from them, and they are its
    distribution (dropping only the draws that disagree would bias every rate read from them).
    """
    if not probs:
        return None, None
    text = "" if raw is None or (isinstance(raw, float) and raw != raw) else str(raw).strip()
    top = max(probs, key=lambda o: probs[o])
    if not text:  # the runner scored the options without writing
        return probs, None
    if label is None:
        return None, f"unread: the text names no option; the probabilities favour {top}"
    if not sampled and str(top).casefold() != str(label).casefold():
        return None, f"conflict: the text names {label}; the probabilities favour {top}"
    return probs, None
