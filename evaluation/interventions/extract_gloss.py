"""The English gloss of Spanish and Chinese answers to the Thud questions, read by ``evaluation.extract``'s rules.

Sync, sound and scene phrases only (``omniaudit.evaluation.answer_language`` explains the mechanism): an answer in
these languages is glossed phrase by phrase into English and read by the English rules; what the lexicon does not
know stays untranslated and cannot trigger a rule, so such an answer stays unparsed rather than misread. A sentence
that describes a scene in its own words ("一个男人在切菜", "un hombre está cortando") is marked with ``SCENE_MARK``, so
a visual-only answer is recognised as one.
"""

from __future__ import annotations

import re

from omniaudit.evaluation.answer_language import Gloss, language, prepare

SCENE_MARK = "a scene is described"  # appended to the gloss of a Spanish or Chinese scene description
_ES_LEXICON = [
    (r"no hay ning[uú]n|no hay ninguna|no hay", "there is no"), (r"no tiene sentido", "makes no sense"),
    (r"no (?:se )?(?:oye|escucha|oigo|escucho|puedo o[ií]r|se puede o[ií]r) nada", "i cannot hear anything"),
    (r"no se (?:oye|escucha)n?|no (?:oigo|escucho)", "i don't hear"), (r"no tiene (?:sonido|audio)", "has no sound"),
    (r"no lo s[eé]|no s[eé]", "i don't know"), (r"no estoy segur[oa]", "i am not sure"),
    (r"no puedo", "i cannot"), (r"no se puede", "it cannot"), (r"(?:lo siento|perd[oó]n|disculpa)", "sorry"),
    (r"sin (?:ning[uú]n )?(?:sonido|audio)", "without sound"),
    (r"silencio (?:total|absoluto|completo)", "total silence"),
    (r"est[aá]n? en silencio", "is silent"), (r"en silencio", "silent"), (r"silencio", "silence"),
    (r"silencios[oa]s?|mud[oa]s?", "silent"), (r"silenciad[oa]s?", "muted"),
    (r"desincronizad[oa]s?|desfasad[oa]s?|fuera de sincron[ií]a|desajustad[oa]s?|no sincronizad[oa]s?",
     "out of sync"),
    (r"sincronizad[oa]s?|en sincron[ií]a|sincron[ií]a|sincronizaci[oó]n", "synchronized"),
    (r"al mismo tiempo|a la vez|simult[aá]neamente", "at the same time"), (r"coinciden?", "coincides"),
    (r"se adelantan?|van? adelantad[oa]s?|adelantad[oa]s?|antes de tiempo", "is early"),
    (r"con (?:un )?retraso|retrasad[oa]s?|atrasad[oa]s?|se retrasan?", "delayed"), (r"retraso|demora", "delay"),
    (r"llegan? tarde", "arrives late"), (r"tarde", "late"), (r"temprano", "early"),
    (r"antes de que|antes de|antes", "before"), (r"despu[eé]s de que|despu[eé]s de|despu[eé]s|luego", "after"),
    (r"respecto (?:a|al|de)|en relaci[oó]n con|con respecto a", "relative to"),
    (r"medio segundo", "half a second"), (r"milisegundos?", "ms"), (r"segundos?", "seconds"),
    (r"aproximadamente|unos|unas|alrededor de|cerca de|casi|m[aá]s o menos", "about"),
    (r"(?:se )?(?:oyen?|escuchan?)|oigo|escucho|puedo (?:o[ií]r|escuchar)", "i hear"),
    (r"(?:se )?ven?|veo", "i see"), (r"el (?:v[ií]deo|clip) muestra", "the video shows"), (r"muestra", "shows"),
    (r"aparecen?", "appears"), (r"en (?:la )?pantalla", "on screen"), (r"de fondo", "in the background"),
    (r"el sonido|los sonidos", "the sound"), (r"sonidos?", "sound"), (r"ruidos?", "noise"), (r"audio", "audio"),
    (r"el v[ií]deo|el clip", "the video"), (r"v[ií]deo", "video"),
    (r"(?:la )?imagen|(?:las )?im[aá]genes", "the picture"),
    (r"(?:la )?escena", "the scene"), (r"m[uú]sica", "music"), (r"voz|voces", "voice"), (r"hablan?", "talks"),
    (r"alguien", "someone"), (r"viento", "wind"), (r"p[aá]jaros", "birds"), (r"cantando", "singing"),
    (r"zumbido", "hum"), (r"motor", "engine"), (r"coche|auto", "car"), (r"perro", "dog"),
    (r"ladridos?", "barking"), (r"ladra", "barks"), (r"lluvia", "rain"), (r"aplausos", "applause"),
    (r"pasos", "footsteps"), (r"risas?", "laughter"), (r"golpe", "thud"), (r"pelota|bal[oó]n", "ball"),
    (r"suelo", "floor"), (r"piano", "piano"), (r"oficina", "office"), (r"playa", "beach"),
    (r"corresponden?", "corresponds"), (r"encajan?", "fits"), (r"concuerdan?", "matches"),
    (r"incoherentes?", "inconsistent"), (r"coherentes?", "consistent"),
    (r"de otr[oa] (?:v[ií]deo|clip)", "from another video"), (r"de otr[oa] escena", "from another scene"),
    (r"de otr[oa] grabaci[oó]n", "from another recording"), (r"de otr[oa] fuente", "from another source"),
    (r"de otr[oa]s?", "from another"),
    (r"parecen? ser|parecen?", "seems"), (r"salvo por|salvo|excepto por|excepto|aparte de", "except for"),
    (r"s[oó]lo|solamente|[uú]nicamente", "only"), (r"pero|aunque|sin embargo", "but"),
    (r"est[aá]n|son", "are"), (r"est[aá]|es", "is"), (r"hay", "there is"), (r"tiene", "has"), (r"va|van", "goes"),
    (r"llegan?", "arrives"), (r"s[ií]", "yes"), (r"no(?=\s*,)", "no"), (r"no", "not"), (r"nada", "nothing"),
    (r"analizar", "analyze"), (r"procesar", "process"), (r"determinar|saber|decir", "tell"),
    (r"corta", "cuts"), (r"riega", "waters"), (r"camina", "walks"), (r"corre", "runs"), (r"salta", "jumps"),
    (r"cae", "falls"), (r"conduce", "drives"), (r"abre", "opens"), (r"juega", "plays"), (r"cocina", "cooks"),
    (r"baila", "dances"), (r"monta", "rides"), (r"lanza", "throws"), (r"sostiene", "holds"), (r"lleva", "carries"),
    (r"un|una", "a"), (r"el|la|los|las|lo", "the"), (r"del", "of the"), (r"al", "to the"), (r"de", "of"),
    (r"con", "with"), (r"y", "and"), (r"que", "that"), (r"en", "in"), (r"leve|suave|d[eé]bil", "faint"),
    (r"perceptible|notable", "noticeable"), (r"ning[uú]n|ninguna", "any"), (r"dos", "two"), (r"tres", "three"),
]
_ZH_LEXICON = [
    ("音画不同步", "audio and video are not synchronized"), ("不同步", "not synchronized"),
    ("没有同步", "not synchronized"), ("未同步", "not synchronized"), ("同步", "synchronized"),
    ("对不上", "do not line up"), ("错位", "misaligned"), ("一致", "consistent"), ("不一致", "inconsistent"),
    ("不匹配", "do not match"), ("匹配", "match"), ("不相符", "does not match"), ("不符合", "does not match"),
    ("不符", "does not match"), ("相符", "matches"), ("符合", "matches"), ("吻合", "matches"),
    ("不对应", "does not correspond"), ("对应", "corresponds"), ("来自另一个", "from another"),
    ("来自另一段", "from another"), ("来自其他", "from another"), ("来自别的", "from another"),
    ("滞后于", "lags behind"), ("落后于", "lags behind"), ("延迟", "delayed"), ("延时", "delayed"),
    ("滞后", "delayed"), ("落后", "delayed"), ("晚了", "late"), ("晚", "late"), ("慢了", "late"), ("慢", "late"),
    ("提前了", "early"), ("提前", "early"), ("超前", "early"), ("早了", "early"), ("快了", "early"),
    ("之前", "before"), ("以前", "before"), ("之后", "after"), ("以后", "after"),
    ("大约", "about"), ("大概", "about"), ("约", "about"), ("左右", ""), ("毫秒", "ms"), ("半秒", "half a second"),
    ("一秒", "one second"), ("两秒", "two seconds"), ("三秒", "three seconds"), ("秒钟", "seconds"), ("秒", "seconds"),
    ("什么也听不到", "i cannot hear anything"), ("什么都听不到", "i cannot hear anything"),
    ("什么也听不见", "i cannot hear anything"), ("什么都听不见", "i cannot hear anything"),
    ("听不到", "cannot hear"), ("听不见", "cannot hear"), ("听到", "hear"), ("听见", "hear"), ("听起来", "sounds"),
    ("没有声音", "no sound"), ("无声", "silent"), ("静音", "silent"), ("寂静", "silence"), ("安静", "quiet"),
    ("狗叫声", "the sound of a dog barking"), ("狗叫", "dog barking"), ("鸟叫声", "the sound of birds chirping"),
    ("鸟叫", "birds chirping"), ("鸟鸣", "birds chirping"), ("风声", "the sound of wind"),
    ("流水声", "the sound of flowing water"), ("水声", "the sound of water"), ("撞击声", "impact sound"),
    ("脚步声", "footsteps"), ("掌声", "applause"), ("笑声", "laughter"), ("雨声", "the sound of rain"),
    ("音乐", "music"), ("钢琴", "piano"), ("小提琴声", "violin music"), ("小提琴", "violin"),
    ("说话", "talking"), ("人声", "voices"), ("噪音", "noise"), ("噪声", "noise"), ("杂音", "noise"),
    ("嗡嗡声", "hum"), ("音频", "audio"), ("声音", "sound"), ("音画", "audio and video"), ("画面", "picture"),
    ("图像", "picture"), ("视频", "video"), ("片段", "clip"), ("声", "sound"), ("背景里", "in the background"),
    ("背景中", "in the background"), ("除了", "except for"), ("只有", "only"), ("但是", "but"), ("但", "but"),
    ("不过", "but"), ("可是", "but"), ("没有", "no"), ("无法判断", "cannot tell"), ("不能判断", "cannot tell"),
    ("无法确定", "cannot tell"), ("不确定", "not sure"), ("不清楚", "not sure"), ("说不准", "cannot tell"),
    ("无法分析", "cannot analyze"), ("不能分析", "cannot analyze"), ("不知道", "don't know"), ("是否", "whether"),
    ("抱歉", "sorry"), ("对不起", "sorry"), ("描述", "describe"), ("似乎", "seems"), ("好像", "seems"),
    ("看起来", "seems"), ("是的", "yes"), ("不是", "not"), ("是", "is"), ("不", "not"), ("有", "there is"),
    ("和", "and"), ("与", "and"), ("比", "than"), ("我", "i"), ("你", "you"), ("很", ""), ("的", ""), ("了", ""),
    ("就", ""), ("出现", "appears"), ("显示", "shows"), ("球", "ball"), ("落地", "lands"), ("狗", "dog"),
]
_GLOSSES = {"es": Gloss(_ES_LEXICON), "zh": Gloss(_ZH_LEXICON, cjk=True)}
# a scene in the answer's own language (checked on the original text): "一个男人在切菜", "un hombre cortando"
_SCENE_ZH = re.compile(r"[一两几][个只位名辆群条匹头架艘块][^,.;:!?，。；：！？]{0,10}?(?:正在|在)|"
                       r"视频(?:中|里)?(?:显示|展示|呈现)|画面(?:中|里|上)|镜头|看到|看见|可以看到")
_SCENE_ES = re.compile(r"\b(?:un|una|unos|unas|el|la|los|las|alguien)\s+(?:\w+\s+){0,3}?(?:est[aá]n?\s+)?"
                       r"\w{2,}(?:ando|iendo)\b", re.I)
_DECIMAL_COMMA = re.compile(r"(\d),(\d{1,2})(?!\d)")  # Spanish "1,5 segundos"


def english(response: str) -> str:
    """The answer, Spanish and Chinese glossed into English sentence by sentence (see ``answer_language``); a
    sentence that describes a scene in its own language is marked so (``SCENE_MARK``)."""
    text = prepare(response)
    lang = language(text)
    if lang not in _GLOSSES:
        return text
    scene = _SCENE_ZH if lang == "zh" else _SCENE_ES
    out = []
    for sentence in re.split(r"(?<=[.!?;])\s+", _DECIMAL_COMMA.sub(r"\1.\2", text) if lang == "es" else text):
        glossed = _GLOSSES[lang](sentence)
        out.append(re.sub(r"(\W*)$", rf", {SCENE_MARK}\1", glossed, count=1) if scene.search(sentence) else glossed)
    return " ".join(out)
