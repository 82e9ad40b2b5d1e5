"""The English gloss of Spanish, Chinese, German and French answers to the Thud questions, read by
the interventions' answer reader's rules (:mod:`~.extract`).

Sync, sound and scene phrases only (``omniaudit.answer_language`` explains the mechanism): an answer in
these languages is glossed phrase by phrase into English and read by the English rules; what the lexicon does not
know stays untranslated and cannot trigger a rule, so such an answer stays unparsed rather than misread. A sentence
that describes a scene in its own words ("一个男人在切菜", "un hombre está cortando") is marked with ``SCENE_MARK``, so
a visual-only answer is recognised as one; German and French scenes are recognised through their glossed verbs ("ein
Mann schneidet": "a man cuts").

Negation is where a word-for-word gloss goes wrong, so it is glossed by phrase and what cannot be placed is dropped:
German "nicht" after its verb ("passt nicht zu") and French "ne ... pas" ("ne correspond pas") are glossed with
their verb; a German verb moved last in a "dass" clause is moved back ("dass der Ton nicht zum Bild passt"); a
German clause ending in "nicht" and a French "ne" around a verb the lexicon does not know leave that clause unread.
A decimal comma ("1,5 Sekunden") is a decimal point. An answer in a language ``language`` names but no lexicon covers
glosses to nothing (it is not read), and a short answer ``language`` takes for English ("Synchron.", "Un homme coupe
des légumes.") is glossed in the language its words belong to (``_language``).
"""

from __future__ import annotations

import re

from omniaudit.answer_language import Gloss, language, prepare

SCENE_MARK = "a scene is described"  # appended to the gloss of a Spanish or Chinese scene description
_ES_LEXICON = [
    (r"no es (?:cierto|verdad) que|no creo que", "it is not the case that"),
    (r"no hay ning[uú]n|no hay ninguna|no hay", "there is no"), (r"no tiene sentido", "makes no sense"),
    # a first impression and a correction ("al principio parecía ..., pero", "en realidad, no"): see
    # extract_phrases._turn
    (r"al principio|en un principio|inicialmente", "at first"), (r"en realidad|de hecho", "actually"),
    (r"(?:yo )?(?:pens[eé]|cre[ií]) que", "i thought that"), (r"parec[ií]an?", "seemed"),
    # incongruity: "extraño para una cocina", "fuera de lugar", "lo cual es raro"
    (r"(?:extra[nñ][oa]|rar[oa]|inusual|inesperad[oa]) para", "odd for"),
    (r"(?:extra[nñ][oa]|rar[oa]|inusual|inesperad[oa]) en", "odd in"), (r"fuera de lugar", "out of place"),
    (r"lo cual es|lo que es", "which is"), (r"no (?:me )?esperar[ií]a", "would not expect"),
    (r"no (?:se )?(?:oye|escucha|oigo|escucho|puedo o[ií]r|se puede o[ií]r) nada", "i cannot hear anything"),
    (r"no se (?:oye|escucha)n?|no (?:oigo|escucho)", "i don't hear"), (r"no tiene (?:sonido|audio)", "has no sound"),
    # a hedge: "no sabría decir si ...", "no podría asegurar", "es difícil saber", "no está claro"
    (r"no (?:lo )?(?:sabr[ií]a|s[eé]|podr[ií]a|puedo) (?:decir|determinar|precisar|asegurar|saber|responder|"
     r"distinguir|afirmar)", "i cannot tell"), (r"no (?:lo )?sabr[ií]a", "i don't know"),
    (r"(?:es )?(?:dif[ií]cil|imposible) (?:de )?(?:decir|saber|determinar|precisar|distinguir)", "hard to tell"),
    (r"no (?:est[aá]|queda) claro", "it is unclear"),
    # scene phrases whose words are glossed otherwise one by one ("va" -> "goes")
    (r"(?:anda|va|monta|pasea) en bici(?:cleta)?", "rides a bike"), (r"(?:anda|va|monta) a caballo", "rides a horse"),
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
    (r"s[oó]lo|solamente|[uú]nicamente", "only"), (r"pero|aunque|sin embargo|sino(?: que)?", "but"),
    (r"est[aá]n|son", "are"), (r"est[aá]|es", "is"), (r"hay", "there is"), (r"tiene", "has"), (r"va|van", "goes"),
    # "sí" is yes, "si" is "if / whether" ("no sé si ...") unless it is the whole reply ("Si, está sincronizado")
    (r"llegan?", "arrives"), (r"s[ií](?=\s*[,.!;:]|\s*$)|sí", "yes"), (r"si", "whether"), (r"o|u", "or"),
    (r"ni", "nor"), (r"no(?=\s*,)", "no"), (r"no", "not"), (r"nada", "nothing"),
    (r"analizar", "analyze"), (r"procesar", "process"), (r"determinar|saber|decir", "tell"),
    (r"corta", "cuts"), (r"riega", "waters"), (r"camina", "walks"), (r"corre", "runs"), (r"salta", "jumps"),
    (r"cae", "falls"), (r"conduce", "drives"), (r"abre", "opens"), (r"juega", "plays"), (r"cocina", "cooks"),
    (r"baila", "dances"), (r"monta", "rides"), (r"lanza", "throws"), (r"sostiene", "holds"), (r"lleva", "carries"),
    (r"pasea", "walks"), (r"come", "eats"), (r"bebe", "drinks"), (r"lee", "reads"), (r"escribe", "writes"),
    (r"pinta", "paints"), (r"limpia", "cleans"), (r"lava", "washes"), (r"empuja", "pushes"), (r"sube", "climbs"),
    (r"cruza", "crosses"), (r"entra", "enters"), (r"duerme", "sleeps"), (r"mira", "looks"), (r"espera", "waits"),
    (r"recoge", "picks"), (r"prepara", "prepares"),
    (r"ni[ñn]a|chica", "girl"), (r"ni[ñn]o|chico", "boy"), (r"ni[ñn]os|ni[ñn]as|chicos|chicas", "children"),
    (r"hombres?|se[ñn]or", "man"), (r"mujer(?:es)?|se[ñn]ora", "woman"), (r"personas|gente", "people"),
    (r"persona", "person"), (r"gatos?", "cat"), (r"caballos?", "horse"), (r"p[aá]jaro", "bird"),
    (r"jard[ií]n", "garden"), (r"calle", "street"), (r"parque", "park"), (r"mercado", "market"),
    (r"bicicleta|bici", "bike"), (r"monta[ñn]a", "mountain"), (r"carretera", "road"), (r"camino", "path"),
    (r"r[ií]o", "river"), (r"mar", "sea"), (r"casa", "house"), (r"mesa", "table"), (r"[aá]rbol(?:es)?", "tree"),
    (r"ciudad", "city"), (r"lago", "lake"), (r"campo", "field"), (r"campana", "bell"),
    (r"un|una", "a"), (r"el|la|los|las|lo", "the"), (r"del", "of the"), (r"al", "to the"), (r"de", "of"),
    (r"con", "with"), (r"y", "and"), (r"que", "that"), (r"en", "in"), (r"leve|suave|d[eé]bil", "faint"),
    (r"perceptible|notable", "noticeable"), (r"ning[uú]n|ninguna", "any"), (r"uno", "one"), (r"dos", "two"),
    (r"tres", "three"), (r"entre", "between"),
]
_ZH_LEXICON = [
    ("一开始", "at first"), ("刚开始", "at first"), ("起初", "at first"), ("最初", "at first"),
    ("其实不是", "actually no,"), ("其实", "actually"), ("实际上", "actually"), ("事实上", "actually"),
    ("我以为", "i thought"), ("本以为", "i thought"), ("原以为", "i thought"),
    ("很奇怪", "which is strange"), ("奇怪", "strange"), ("格格不入", "out of place"), ("突兀", "out of place"),
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
    ("能听到", "i can hear"), ("能听见", "i can hear"), ("可以听到", "i can hear"), ("可以听见", "i can hear"),
    ("听得到", "i can hear"), ("听得见", "i can hear"), ("不能听到", "cannot hear"), ("不能听见", "cannot hear"),
    ("没能听到", "cannot hear"), ("没有听到", "did not hear"), ("没有听见", "did not hear"),
    ("没听到", "did not hear"), ("没听见", "did not hear"),
    ("鸣笛", "honking"), ("喇叭声", "honking"), ("汽车", "car"), ("人群", "crowd"), ("嘈杂声", "noise"),
    ("嘈杂", "noisy"),
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
    ("不过", "but"), ("可是", "but"), ("没有任何", "no"), ("任何", "any"), ("没有", "no"), ("还是", "or"),
    ("说不清", "cannot tell"), ("分不清", "cannot tell"), ("听不出", "cannot tell"), ("看不出", "cannot tell"),
    ("无法判断", "cannot tell"), ("不能判断", "cannot tell"),
    ("无法确定", "cannot tell"), ("不确定", "not sure"), ("不清楚", "not sure"), ("说不准", "cannot tell"),
    ("无法分析", "cannot analyze"), ("不能分析", "cannot analyze"), ("不知道", "don't know"), ("是否", "whether"),
    ("抱歉", "sorry"), ("对不起", "sorry"), ("描述", "describe"), ("似乎", "seems"), ("好像", "seems"),
    ("看起来", "seems"), ("是的", "yes"), ("不是", "not"), ("是", "is"), ("不", "not"), ("有", "there is"),
    ("和", "and"), ("与", "and"), ("比", "than"), ("我", "i"), ("你", "you"), ("很", ""), ("的", ""), ("了", ""),
    ("就", ""), ("出现", "appears"), ("显示", "shows"), ("球", "ball"), ("落地", "lands"), ("狗", "dog"),
    ("看到", "see"), ("看见", "see"),
]
# German: "nicht" comes after the verb ("passt nicht zu", "stimmt nicht überein"), so the negated verb phrases are
# glossed whole; a dative article ("dem Bild", "den Bildern") is never the subject: "to the" keeps the picture out
# of the subject's place ("der Ton eilt dem Bild voraus": the sound is ahead)
_DE_LEXICON = [
    (r"es ist nicht so,? dass|es stimmt nicht,? dass|es ist nicht wahr,? dass|(?:ich )?(?:glaube|denke|finde|meine) "
     r"nicht,? dass", "it is not the case that"),
    (r"zun[äa]chst|anfangs|am anfang|zuerst", "at first"), (r"in wirklichkeit|tats[äa]chlich", "actually"),
    (r"(?:ich (?:dachte|glaubte)|(?:dachte|glaubte) ich|ich hatte gedacht),?(?: dass)?", "i thought that"),
    (r"schienen|schien", "seemed"),
    (r"fehl am platz|deplatziert|unpassend", "out of place"),
    (r"(?:seltsam|merkw[üu]rdig|komisch|ungew[öo]hnlich|unerwartet) f[üu]r", "odd for"),
    (r"(?:seltsam|merkw[üu]rdig|komisch|ungew[öo]hnlich|unerwartet) (?:in|im)", "odd in"),
    (r"was (?:seltsam|merkw[üu]rdig|komisch|ungew[öo]hnlich) ist", "which is strange"),
    (r"seltsam|merkw[üu]rdig|komisch", "strange"), (r"ungew[öo]hnlich", "unusual"),
    # consistency
    (r"pass(?:t|en)(?: gar| überhaupt)? nicht (?:zum|zur)", "does not fit the"),
    (r"pass(?:t|en)(?: gar| überhaupt)? nicht(?: zu| zusammen)?", "does not fit"),
    (r"pass(?:t|en)(?: gut| perfekt| genau)? (?:zum|zur)", "fits the"),
    (r"pass(?:t|en)(?: gut| perfekt| genau)?(?: zu| zusammen)?", "fits"),
    (r"(?:stimm(?:t|en)|[üu]bereinstimm(?:t|en)) nicht(?: mit| [üu]berein)?", "does not match"),
    (r"stimm(?:t|en) (?:mit|[üu]berein)|[üu]bereinstimm(?:t|en)", "matches"), (r"[üu]berein", ""),
    (r"entspr(?:icht|echen) nicht", "does not correspond to"), (r"entspr(?:icht|echen)", "corresponds to"),
    (r"geh[öo]r(?:t|en) nicht (?:zum|zur|zu)", "does not belong to"),
    (r"geh[öo]r(?:t|en) (?:zum|zur|zu)", "belongs to"),
    (r"(?:von|aus) (?:einem|einer) anderen (?:video|clip|szene|aufnahme|quelle)", "from another video"),
    (r"inkonsistent|widerspr[üu]chlich", "inconsistent"), (r"konsistent|stimmig", "consistent"),
    # silence and sound
    (r"(?:man h[öo]rt|h[öo]rt man|ich h[öo]re)(?: gar| [üu]berhaupt| absolut)? nichts|(?:es ist )?(?:gar |"
     r"[üu]berhaupt |absolut )?nichts zu h[öo]ren|(?:man h[öo]rt|h[öo]rt man|ich h[öo]re) kein(?:e|en)? (?:ton|"
     r"ger[äa]usche?|audio)", "i cannot hear anything"),
    (r"keine(?:n|rlei)? (?:ton|tonspur|audio|ger[äa]usche?|kl[äa]nge?)", "no sound"),
    (r"ohne (?:jeden |jeglichen )?(?:ton|audio|ger[äa]usche?)", "without sound"),
    (r"(?:v[öo]llige|absolute|totale|komplette) stille", "total silence"), (r"stille", "silence"),
    (r"stummgeschaltet", "muted"), (r"stumm|tonlos|lautlos|still", "silent"),
    (r"v[öo]llig|komplett|g[äa]nzlich", "completely"),
    (r"man h[öo]rt|h[öo]rt man|ich h[öo]re|(?:ist|sind) zu h[öo]ren|zu h[öo]ren (?:ist|sind)", "i hear"),
    (r"h[öo]rbar", "audible"), (r"man sieht|sieht man|ich sehe|(?:ist|sind) zu sehen|zu sehen (?:ist|sind)", "i see"),
    (r"(?:das|der) (?:video|clip) zeigt", "the video shows"), (r"zeigt", "shows"),
    (r"im bild|auf dem bildschirm", "on screen"), (r"im hintergrund", "in the background"),
    # sync
    (r"nicht synchron(?:isiert)?|asynchron|unsynchron", "not synchronized"),
    (r"synchron(?:isiert)?", "synchronized"), (r"gleichzeitig|zeitgleich", "at the same time"),
    (r"zeitlich versetzt|versetzt|verschoben", "out of sync"), (r"zeitversatz|versatz", "offset"),
    (r"verz[öo]gerung|latenz", "delay"), (r"verz[öo]gert|versp[äa]tet", "delayed"),
    (r"zu sp[äa]t", "too late"), (r"sp[äa]ter", "later"), (r"sp[äa]t", "late"),
    (r"zu fr[üu]h", "too early"), (r"fr[üu]her", "earlier"), (r"fr[üu]h", "early"),
    (r"hinkt|hinken", "lags"), (r"hinterher", "behind"), (r"voraus", "ahead"), (r"eilt|eilen", "runs"),
    (r"bevor|vor", "before"), (r"nachdem|nach", "after"),
    (r"im vergleich (?:zum|zur)|relativ zu(?:m|r)?|gegen[üu]ber", "relative to"),
    (r"(?:eine )?halbe sekunde", "half a second"), (r"anderthalb sekunden|eineinhalb sekunden", "1.5 seconds"),
    (r"millisekunden?", "ms"), (r"sekunden?", "seconds"),
    (r"ungef[äa]hr|etwa|circa|ca\.|zirka|rund|knapp|fast", "about"),
    (r"um(?=\s+(?:ungef[äa]hr|etwa|circa|ca\.|zirka|rund|knapp|fast|\d|eine?|zwei|drei|halbe)\b)", "by"),
    # what is not a claim
    (r"(?:ich|man) kann (?:es |das )?nicht (?:sagen|erkennen|beurteilen|feststellen|bestimmen)", "i cannot tell"),
    (r"ich wei(?:ß|ss) (?:es |das )?nicht", "i don't know"), (r"ich bin (?:mir )?nicht sicher", "i am not sure"),
    (r"schwer zu (?:sagen|erkennen|beurteilen)", "hard to tell"), (r"unklar", "unclear"),
    (r"in welche richtung", "in which direction"), (r"richtung", "direction"),
    (r"es tut mir leid|entschuldigung|leider", "sorry"),
    # nouns, verbs of a scene, function words
    (r"tonspur", "soundtrack"), (r"ton|kl[äa]nge?", "sound"), (r"ger[äa]usche?", "noise"), (r"bilder|bild", "picture"),
    (r"video", "video"), (r"szene", "scene"), (r"aufnahme", "recording"), (r"musik", "music"),
    (r"stimmen|stimme", "voice"), (r"hund", "dog"), (r"bellen|bellt|gebell", "barking"), (r"v[öo]gel", "birds"),
    (r"vogelgezwitscher|vogelgesang", "birdsong"),
    (r"zwitschern|zwitschert", "chirping"), (r"regen", "rain"), (r"wind", "wind"), (r"motor", "engine"),
    (r"klavier", "piano"), (r"schritte", "footsteps"), (r"applaus|beifall", "applause"), (r"lachen", "laughter"),
    (r"knall", "bang"), (r"aufprall", "impact"), (r"ball", "ball"), (r"boden", "floor"), (r"k[üu]che", "kitchen"),
    (r"garten", "garden"), (r"wald", "forest"), (r"strand", "beach"), (r"b[üu]ro", "office"),
    (r"mann", "man"), (r"frau", "woman"), (r"kind", "child"), (r"jemand", "someone"), (r"katze", "cat"),
    (r"schneidet", "cuts"), (r"gie(?:ß|ss)t", "waters"), (r"geht", "walks"), (r"l[äa]uft|rennt", "runs"),
    (r"f[äa]hrt", "rides"), (r"springt", "jumps"), (r"f[äa]llt", "falls"), (r"spielt", "plays"), (r"kocht", "cooks"),
    (r"tanzt", "dances"), (r"wirft", "throws"), (r"h[äa]lt", "holds"), (r"tr[äa]gt", "carries"), (r"sitzt", "sits"),
    (r"steht", "stands"), (r"[öo]ffnet", "opens"), (r"schlie(?:ß|ss)t", "closes"), (r"isst", "eats"),
    (r"trinkt", "drinks"), (r"liest", "reads"), (r"schwimmt", "swims"), (r"spricht|redet", "talks"),
    (r"singt", "sings"), (r"kommt", "comes"), (r"kommen", "come"), (r"landet", "lands"),
    (r"es gibt|gibt es", "there is"), (r"ja", "yes"), (r"nein", "no"), (r"nicht", "not"), (r"nichts", "nothing"),
    (r"kein(?:e|en|er|em|es)?", "no"), (r"ist|sei", "is"), (r"sind|seien", "are"), (r"war|w[äa]re", "was"),
    (r"es", "it"),
    (r"hat", "has"), (r"haben", "have"), (r"und", "and"), (r"oder", "or"), (r"aber|sondern|jedoch", "but"),
    (r"ob", "whether"), (r"wenn|falls", "if"), (r"nur", "only"), (r"au(?:ß|ss)er|bis auf", "except for"),
    (r"bis", "to"),
    (r"perfekt", "perfectly"), (r"mit", "with"), (r"zum|zur", "to the"), (r"zu", "to"), (r"im", "in the"),
    (r"in", "in"), (r"auf", "on"), (r"vom", "from the"), (r"von|aus", "from"), (r"f[üu]r", "for"), (r"als", "than"),
    (r"dem|den", "to the"), (r"des", "of the"), (r"der|die|das", "the"),
    (r"eine|einen|einem|einer|eines|ein", "a"), (r"zwei", "two"), (r"drei", "three"), (r"man", "one"),
]
# French, after its elisions are spelled out ("n'est" -> "ne est", "l'image" -> "le image"): a known negated verb
# phrase is glossed whole ("ne correspond pas" -> "does not correspond"); any other "ne" marks a negation the lexicon
# cannot place, and the rest of its clause is left unread (see ``english``)
_UNPLACED_NEGATION = "unplacednegation"
_FR_LEXICON = [
    (r"ce ne est pas (?:vrai|le cas) que|il ne est pas vrai que|il est faux (?:de dire )?que|je ne (?:pense|crois) "
     r"pas que",
     "it is not the case that"),
    (r"au d[ée]but|au premier abord|de abord|initialement", "at first"),
    (r"en fait|en r[ée]alit[ée]|en v[ée]rit[ée]", "actually"),
    (r"je (?:pensais|croyais|ai cru|ai pens[ée]) que", "i thought that"),
    (r"semblait|semblaient|paraissait", "seemed"),
    (r"d[ée]plac[ée]e?s?|incongru(?:e|s|es)?", "out of place"),
    (r"(?:[ée]trange|bizarre|inhabituel(?:le)?|inattendue?|curieux|curieuse) pour", "odd for"),
    (r"(?:[ée]trange|bizarre|inhabituel(?:le)?|inattendue?|curieux|curieuse) dans", "odd in"),
    (r"ce qui est", "which is"), (r"[ée]trange|bizarre|curieux|curieuse", "strange"),
    (r"inhabituel(?:le)?", "unusual"),
    # negated verb phrases
    (r"ne correspond(?:ent|e|es)? pas", "does not correspond"), (r"ne (?:colle(?:nt)?|va|vont) pas", "does not fit"),
    (r"ne co[ïi]ncide(?:nt)? pas", "do not coincide"), (r"ne arrive(?:nt)? pas", "does not arrive"),
    (r"ne (?:est|sont|semble|semblent) pas(?: du tout)?", "is not"), (r"ne (?:était|étaient) pas", "was not"),
    (r"il ne y a (?:pas de|aucun) (?:son|bruit|audio)", "there is no sound"),
    (r"il ne y a (?:pas de|aucun|aucune)", "there is no"), (r"il ne y a rien", "there is nothing"),
    (r"ne a (?:pas de|aucun) (?:son|bruit|audio)", "has no sound"), (r"ne a (?:pas de|aucun|aucune)", "has no"),
    (r"(?:je|on|nous) (?:ne )?(?:entends|entend|entendons) (?:rien|aucun son|aucun bruit|pas de son|pas de bruit|"
     r"pas le son)"
     r"|(?:je|on|nous) ne (?:peux|peut|pouvons) rien entendre", "i cannot hear anything"),
    (r"(?:je|on|nous) ne (?:entends|entend|entendons) que", "i hear only"),
    (r"je ne sais pas", "i don't know"), (r"je ne suis pas s[ûu]re?", "i am not sure"),
    (r"je ne peux pas|on ne peut pas", "i cannot"), (r"ne pas", "not"),
    (r"ne", _UNPLACED_NEGATION),
    # consistency
    (r"correspond(?:ent|e|es)?", "corresponds"), (r"colle(?:nt)? (?:bien |parfaitement )?(?:avec|[àa])", "fits"),
    (r"va (?:bien |parfaitement )?avec|vont (?:bien )?ensemble", "goes with"),
    (r"de (?:une|un) autre (?:vid[ée]o|sc[èe]ne|enregistrement|source)", "from another video"),
    (r"incoh[ée]rente?s?", "inconsistent"), (r"coh[ée]rente?s?", "consistent"),
    # silence and sound
    (r"pas de (?:son|audio|bruit)|aucun (?:son|bruit)", "no sound"),
    (r"sans (?:aucun )?(?:son|audio)", "without sound"),
    (r"silence (?:total|complet|absolu)", "total silence"), (r"silence", "silence"),
    (r"silencieu(?:x|se|ses)|muette?s?", "silent"), (r"(?:le )?son (?:est )?coup[ée]", "the sound is muted"),
    (r"(?:(?:on|je|nous) (?:peut |peux |pouvons )?entend(?:s|ons)?|entend-on)(?! (?:pas|rien|plus|jamais|aucun))",
     "i hear"),
    (r"(?:on|je|nous) (?:voit|vois|voyons)|voit-on", "i see"), (r"audible", "audible"),
    (r"la vid[ée]o montre|le clip montre", "the video shows"), (r"montre", "shows"),
    (r"[àa] le [ée]cran", "on screen"), (r"en arri[èe]re-plan|en fond", "in the background"),
    # sync
    (r"(?:non[- ]|pas )synchroni(?:s[ée]e?s?|[sz]ed)", "not synchronized"),
    (r"d[ée]synchronis[ée]e?s?|asynchrones?|d[ée]cal[ée]e?s?", "out of sync"),
    (r"synchronis[ée]e?s?|synchrones?", "synchronized"), (r"synchronisation", "synchronization"),
    (r"d[ée]calage", "offset"), (r"en même temps|au même moment|simultan[ée]ment", "at the same time"),
    (r"co[ïi]ncide(?:nt)?", "coincides"), (r"en retard|trop tard", "late"), (r"retard[ée]e?s?", "delayed"),
    (r"retard", "delay"), (r"en avance|trop t[ôo]t", "early"), (r"plus tard", "later"), (r"plus t[ôo]t", "earlier"),
    (r"tard", "late"), (r"t[ôo]t", "early"), (r"avant que|avant de|avant", "before"), (r"apr[èe]s", "after"),
    (r"pr[ée]c[èe]de(?:nt)?", "precedes"), (r"par rapport (?:[àa] la|[àa] le|[àa]|au|aux)", "relative to"),
    (r"de (?:une )?demi-seconde", "by half a second"), (r"(?:une )?demi-seconde", "half a second"),
    (r"une seconde et demie", "1.5 seconds"), (r"millisecondes?", "ms"), (r"secondes?", "seconds"),
    (r"de environ|de à peu près", "by about"), (r"environ|[àa] peu pr[èe]s|approximativement|presque", "about"),
    (r"de(?=\s+(?:\d|une?\s|deux|trois))", "by"),
    # what is not a claim
    (r"difficile (?:[àa]|de) (?:dire|d[ée]terminer|savoir)|impossible (?:[àa]|de) dire", "hard to tell"),
    (r"dans quel sens|dans quelle direction", "in which direction"), (r"d[ée]sol[ée]e?", "sorry"),
    # nouns, verbs of a scene, function words
    (r"le son|du son|ce son", "the sound"), (r"un son", "a sound"), (r"les sons|des sons", "the sounds"),
    (r"le audio|la bande sonore", "the audio"), (r"bruits?", "noise"), (r"images?", "picture"),
    (r"vid[ée]o", "video"), (r"sc[èe]ne", "scene"), (r"musique", "music"), (r"voix", "voice"), (r"chiens?", "dog"),
    (r"aboyer|aboie|aboient|aboiements?", "barking"), (r"oiseaux", "birds"), (r"pluie", "rain"), (r"vent", "wind"),
    (r"moteur", "engine"), (r"voiture", "car"), (r"applaudissements", "applause"), (r"rires?", "laughter"),
    (r"bourdonnement", "hum"), (r"balle|ballon", "ball"), (r"sol", "floor"), (r"cuisine", "kitchen"),
    (r"jardin", "garden"), (r"for[êe]t", "forest"), (r"plage", "beach"), (r"bureau", "office"),
    (r"fait du v[ée]lo|fait de la bicyclette|roule [àa] v[ée]lo", "rides a bike"),
    (r"fait du cheval", "rides a horse"), (r"fait du ski", "skis"), (r"fait du surf", "surfs"),
    (r"fait du skate(?:board)?", "skates"), (r"fait (?:du|un) jogging", "runs"), (r"fait la cuisine", "cooks"),
    (r"fait la vaisselle", "washes the dishes"),
    (r"hommes?", "man"), (r"femmes?", "woman"), (r"enfants?", "child"), (r"quelqu'un", "someone"), (r"chat", "cat"),
    (r"fille", "girl"), (r"gar[çc]on", "boy"), (r"gens", "people"), (r"cheval", "horse"), (r"oiseau", "bird"),
    (r"route", "road"), (r"montagne", "mountain"), (r"rue", "street"), (r"parc", "park"),
    (r"marchés?", "market"),
    (r"v[ée]lo", "bike"), (r"rivi[èe]re", "river"), (r"mer", "sea"), (r"maison", "house"), (r"ville", "city"),
    (r"lac", "lake"), (r"champ", "field"), (r"arbres?", "tree"),
    (r"roule", "rides"), (r"p[ée]dale", "rides"), (r"promène", "walks"), (r"grimpe", "climbs"),
    (r"[ée]crit", "writes"), (r"peint", "paints"), (r"nettoie", "cleans"), (r"lave", "washes"),
    (r"pousse", "pushes"), (r"traverse", "crosses"), (r"regarde", "looks"), (r"attend", "waits"),
    (r"dort", "sleeps"), (r"pr[ée]pare", "prepares"), (r"lit", "reads"),
    (r"coupe", "cuts"), (r"arrose", "waters"), (r"marche", "walks"), (r"court", "runs"), (r"saute", "jumps"),
    (r"tombe", "falls"), (r"conduit", "drives"), (r"ouvre", "opens"), (r"ferme", "closes"), (r"joue", "plays"),
    (r"danse", "dances"), (r"lance", "throws"), (r"tient", "holds"), (r"porte", "carries"), (r"mange", "eats"),
    (r"boit", "drinks"), (r"nage", "swims"), (r"parle", "talks"), (r"chante", "sings"), (r"rebondit", "bounces"),
    (r"arrive(?:nt)?", "arrives"), (r"vient|viennent", "comes"),
    (r"ce est|il est", "it is"), (r"il y a", "there is"), (r"oui", "yes"), (r"non", "no"), (r"pas", "not"),
    (r"rien", "nothing"), (r"aucune?", "no"), (r"est", "is"), (r"sont", "are"), (r"[ée]tait", "was"),
    (r"a", "has"), (r"et", "and"), (r"ou", "or"), (r"mais|cependant|pourtant|toutefois", "but"), (r"si", "whether"),
    (r"seulement|uniquement|juste", "only"), (r"sauf|[àa] part|except[ée]", "except for"),
    (r"parfaitement", "perfectly"), (r"le|la|les", "the"), (r"une?", "a"), (r"des", "some"), (r"du", "of the"),
    (r"au|aux", "to the"), (r"[àa]", "to"), (r"de", "of"), (r"avec", "with"), (r"dans", "in"), (r"sur", "on"),
    (r"pour", "for"), (r"que", "that"), (r"il|elle", "it"), (r"on", "we"), (r"je", "i"), (r"deux", "two"),
    (r"trois", "three"),
]
_GLOSSES = {"es": Gloss(_ES_LEXICON), "zh": Gloss(_ZH_LEXICON, cjk=True), "de": Gloss(_DE_LEXICON),
            "fr": Gloss(_FR_LEXICON)}
GLOSSED = tuple(_GLOSSES)  # the languages the Thud readers read, besides English
# a scene in the answer's own language (checked on the original text): "一个男人在切菜", "un hombre cortando"; German
# and French scenes are recognised in the gloss ("ein Mann schneidet" -> "a man cuts")
_SCENE_ZH = re.compile(r"[一两几][个只位名辆群条匹头架艘块][^,.;:!?，。；：！？]{0,10}?(?:正在|在)|"
                       r"视频(?:中|里)?(?:显示|展示|呈现)|画面(?:中|里|上)|镜头|看到|看见|可以看到")
_SCENE_ES = re.compile(r"\b(?:un|una|unos|unas|el|la|los|las|alguien)\s+(?:\w+\s+){0,3}?(?:est[aá]n?\s+)?"
                       r"\w{2,}(?:ando|iendo)\b", re.I)
_SCENES = {"zh": _SCENE_ZH, "es": _SCENE_ES}
_DECIMAL_COMMA = re.compile(r"(\d),(\d{1,2})(?!\d)")  # "1,5 segundos", "1,5 Sekunden", "1,5 seconde"
_ELISION = re.compile(r"\b(qu|[ldnjsc])'(?=\w)", re.I)  # French "n'est", "l'image", "d'une", "j'entends"
_ELIDED = {"qu": "que ", "l": "le ", "d": "de ", "n": "ne ", "j": "je ", "s": "se ", "c": "ce "}
# a German subordinate clause puts the verb last, after its "nicht" ("dass der Ton nicht zum Bild passt"): the verb
# is moved before it, so the negated verb phrase is glossed whole ("passt nicht zum Bild": "does not fit the picture")
_VERB_LAST = re.compile(r"\bnicht\s+((?:(?!(?:und|oder|aber|sondern|denn|dass|weil|ist|sind|pass\w*)\b)"
                        r"[^\W\d_]+\s+){0,4}?)(pass(?:t|en)|geh[öo]r(?:t|en)|entspr(?:icht|echen)|"
                        r"[üu]bereinstimm(?:t|en))\b", re.I)
# a clause that ends in "nicht" negates its verb ("Ich höre den Hund nicht"): unless the verb is one glossed with its
# negation ("passt nicht"), the clause is not read
_GLOSSED_NICHT = re.compile(r"\b(?:pass|stimm|entspr|geh[öo]r|[üu]bereinstimm)\w*(?:\s+(?:gar|[üu]berhaupt))?\s+"
                            r"nicht\s*$", re.I)


_NEGATED_BELIEF = re.compile(r"\b(?:glaube|denke|finde|meine)\s+nicht\s*$", re.I)


def _final_nicht(text: str) -> str:
    """``text`` without the clauses that end in a "nicht" the lexicon cannot place, nor the "dass" / "ob" clause that
    follows one ("Ich höre nicht, dass ..."); "Ich glaube nicht, dass ..." is glossed as "it is not the case that"."""
    parts = re.split(r"([.;:!?,])", text)
    drop = False
    for i in range(0, len(parts), 2):
        part = parts[i]
        if drop and re.match(r"\s*(?:dass|ob|wie|weil|wenn)\b", part, re.I):
            parts[i] = " "
            continue
        drop = False
        if re.search(r"\bnicht\s*$", part, re.I) and not _GLOSSED_NICHT.search(part):
            if _NEGATED_BELIEF.search(part) and i + 2 < len(parts) and parts[i + 1] == "," and re.match(
                    r"\s*dass\b", parts[i + 2], re.I):
                continue
            parts[i], drop = " ", True
    return "".join(parts)


# words of a German, French or Spanish answer too short for ``language`` to place ("Synchron.", "Un homme coupe des
# légumes.", "On n'entend rien."): it is read in the language whose words outnumber English ones and the others'
_DE_WORDS = {"synchron", "synchronisiert", "asynchron", "versetzt", "verzögert", "verspätet", "nicht", "kein",
             "keine", "keinen", "ja", "nein", "stumm", "stille", "tonlos", "sekunde", "sekunden", "mann", "frau",
             "bild", "hört", "höre", "passt", "ist", "sind", "und", "der", "das", "dem", "den", "ich", "gibt", "ton",
             "nichts", "zu", "spät", "früh", "ein", "eine", "einen", "mit", "im", "kommt"}
_FR_WORDS = {"synchronisé", "synchronisée", "synchronisés", "synchronisées", "désynchronisé", "désynchronisés",
             "décalé", "décalés", "retard", "oui", "silencieux", "silencieuse", "muet", "muette", "seconde",
             "secondes", "homme", "femme", "des", "entend", "entends", "vidéo", "correspond", "le", "les", "du", "une",
             "et", "est", "sont", "je", "pas", "rien", "avec", "dans", "mais", "aucun", "aucune", "sans", "son", "il",
             "elle", "scène"}
_ES_WORDS = {"el", "los", "las", "es", "está", "están", "son", "hay", "que", "del", "y", "con", "por", "pero", "se",
             "lo", "sí", "nada", "estoy", "seguro", "segura", "sé", "sonido", "oye", "oigo", "sincronizado"}
_EN_WORDS = {"the", "is", "are", "a", "an", "and", "of", "to", "with", "it", "this", "there", "i", "by", "be", "was",
             "has", "sound", "sounds", "clip", "one", "yes", "no", "at", "not", "but", "some", "seconds", "second",
             "delayed", "synchronized", "synchronised", "woman", "hear", "see"}
_FR_ELISION = re.compile(r"\b(?:[ldnjc]|qu)'[^\W\d_]", re.I)  # "l'image", "n'entend", "qu'il"


def _language(text: str) -> str:
    """``language(text)``; for an answer it takes for English, the one of German, French and Spanish whose words
    (and French elisions) outnumber English words and the other two's, if any."""
    lang = language(text)
    if lang != "en":
        return lang
    words = re.findall(r"[^\W\d_]+", text.lower())
    score = {"de": sum(w in _DE_WORDS for w in words), "es": sum(w in _ES_WORDS for w in words),
             "fr": sum(w in _FR_WORDS for w in words) + len(_FR_ELISION.findall(text))}
    best = max(score, key=score.get)
    rival = max(v for other, v in score.items() if other != best)
    return best if score[best] > max(rival, sum(w in _EN_WORDS for w in words)) else lang


def english(response: str) -> str:
    """The answer, Spanish, Chinese, German and French glossed into English sentence by sentence (see
    ``answer_language``); a sentence that describes a scene in its own language is marked so (``SCENE_MARK``). An
    answer in a language with no gloss reads as nothing (empty text): it never reaches the English rules raw, where a
    cognate ("correspond", "synchronisé") would be read without its negation."""
    text = prepare(response)
    lang = _language(text)
    if lang == "en":
        return text
    if lang not in _GLOSSES:
        return ""
    if lang in ("es", "de", "fr"):
        text = _DECIMAL_COMMA.sub(r"\1.\2", text)
    if lang == "de":
        text = _final_nicht(_VERB_LAST.sub(r"\2 nicht \1", text))
    if lang == "fr":
        text = _ELISION.sub(lambda m: _ELIDED[m.group(1).lower()], re.sub(r"\bs'il\b", "si il", text, flags=re.I))
    scene = _SCENES.get(lang)
    out = []
    for sentence in re.split(r"(?<=[.!?;])\s+", text):
        glossed = _GLOSSES[lang](sentence)
        # a negation the lexicon cannot place: what it negates is not read ("le son ne précède pas l'image")
        glossed = re.sub(rf"\b{_UNPLACED_NEGATION}\b[^.;:!?,]*", " ", glossed).strip()
        out.append(re.sub(r"(\W*)$", rf", {SCENE_MARK}\1", glossed, count=1)
                   if scene is not None and scene.search(sentence) else glossed)
    return " ".join(out)
