"""The words of a choice in the languages the closed-item reader glosses, and the other names of common labels.

``omniaudit.answer_language`` explains the mechanism: a reply in Spanish, Chinese, German, French, Portuguese,
Italian, Russian, Japanese or Korean is glossed phrase by phrase into the English the reader's rules read ("Respuesta:
B" is "answer: B", "Я выбираю второй" is "I choose the second", "Bを選びます" is "B is my choice"); words a lexicon
does not know stay as they are and trigger no rule. Japanese and Korean put the object before the verb and mark it
with a particle ("Bが良い", "B가 더 낫습니다"): :func:`particles_dropped` takes the particle off an option, and the
lexicons gloss the verb phrase that follows into an English predicate ("is better", "is my choice"), which the
reader's rules read after an option. A negation after an option ("Bではない", "B가 아닙니다") is moved before it.

:data:`ALIASES`: per label (lower case), the other words that name it, in these languages.
"""

from __future__ import annotations

import re

from omniaudit.answer_language import Gloss
from omniaudit.runners.certainty_glosses import CERTAINTY, LATIN
from omniaudit.runners.correction_glosses import CORRECTIONS

# ------------------------------------------------------------------------------ Spanish and Chinese choice words
_ES_CHOICE = Gloss(CORRECTIONS["es"] + CERTAINTY["es"] + [
    (r"seg[uú]n la etiqueta", "according to the label"), (r"(?:la|el) etiqueta(?: de referencia)?", "the label"),
    (r"dice", "says"), (r"(?:yo )?oigo|(?:yo )?escucho", "I hear"),
    (r"(?:la|mi) respuesta(?: final| correcta)? es", "the answer is"), (r"respuesta(?: final| correcta)?", "answer"),
    (r"(?:mi )?elecci[oó]n(?: final)? es", "my choice is"), (r"elecci[oó]n", "choice"),
    (r"(?:yo )?dir[ií]a(?: que)?", "I'd say"),
    (r"(?:yo )?(?:elijo|escojo|selecciono|elegir[ií]a|escoger[ií]a|me quedo con|me quedar[ií]a con|opto por|"
     r"voto por|me decanto por)", "I choose"), (r"prefiero|preferir[ií]a", "I prefer"),
    (r"si (?:tuviera|tengo) que (?:elegir|escoger|decidir)|si me obligan(?: a elegir)?|obligad[oa] a elegir",
     "if forced"),
    (r"(?:es|suena|parece|son|suenan) (?:mucho |claramente |ligeramente |un poco )?mejor(?:es)?", "is better"),
    (r"mejor", "better"), (r"(?:el|la) primer[oa]?|el primer", "the first"), (r"(?:el|la) segund[oa]", "the second"),
    (r"primer[oa]?", "first"), (r"segund[oa]", "second"), (r"opci[oó]n", "option"), (r"grabaci[oó]n", "recording"),
    (r"muestra", "sample"), (r"fragmento|clip", "clip"), (r"descripci[oó]n", "description"),
    (r"candidat[oa]", "candidate"), (r"audio|pista", "audio"),
    # the adjective before its subject: "Suena más natural el audio 1", "Me parece más limpio el B"
    (r"(?:me )?(?:suena|parece|es|resulta) m[aá]s natural (?:el|la)", "the more natural one is"),
    (r"(?:me )?(?:suena|parece|es|resulta) m[aá]s limpi[oa] (?:el|la)", "the cleaner one is"),
    (r"menos ruido de fondo", "less background noise"), (r"menos ruido", "less noise"),
    (r"m[aá]s ruido", "more noise"),
    (r"m[aá]s ruidos[oa]s?", "noisier"),
    (r"m[aá]s limpi[oa]s?", "cleaner"), (r"m[aá]s clar[oa]s?", "clearer"), (r"m[aá]s natural(?:es)?", "more natural"),
    (r"m[aá]s fiel(?:es)?", "more faithful"), (r"la misma persona", "the same person"), (r"suenan?", "sounds"),
    (r"tiene", "has"), (r"m[aá]s", "more"), (r"menos", "less"), (r"ninguno|ninguna", "neither"), (r"ni", "nor"),
    (r"ambos|ambas|los dos|las dos", "both"), (r"o", "or"), (r"y", "and"), (r"pero|aunque", "but"),
    (r"no lo s[eé]|no s[eé]", "I don't know"), (r"espera|espere", "wait"),
    (r"no estoy segur[oa]", "I am not sure"), (r"no(?=\s*,)", "no"),
    (r"no es", "it is not"), (r"no son", "they are not"), (r"no", "not"), (r"es", "it is"),
    (r"la|el|los|las|lo", "the"), (r"uno", "one"), (r"dos", "two"),
    (r"que", "than"), (r"igual(?:es)?", "the same"),
])
_ZH_CHOICE = Gloss(CORRECTIONS["zh"] + CERTAINTY["zh"] + [
    ("答案是", "the answer is"), ("答案为", "the answer is"), ("答案", "answer"), ("我的选择是", "my choice is"),
    ("我选择", "I choose"), ("我选", "I choose"), ("选择", "choose"), ("选", "choose"), ("我更喜欢", "I prefer"),
    ("更喜欢", "prefer"), ("偏好", "prefer"), ("如果必须选", "if forced"), ("如果一定要选", "if forced"),
    ("非要选的话", "if forced"),
    ("更符合", "fits better"), ("更适合", "fits better"), ("选项", "option"), ("音频", "audio"),
    ("录音", "recording"), ("片段", "clip"),
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
    ("说不准", "I cannot tell"), ("参考标签是", "the reference label is "), ("标签是", "the label is "),
    ("根据标签", "according to the label "), ("我听到的是", "I hear "), ("我听到", "I hear "), ("但", "but "),
    ("我", "I"), ("是", "is"), ("的", ""), ("了", ""), ("很", ""), ("吧", ""),
], cjk=True)
# German and French: the choice words, ordinals and negations the English rules read
_DE_CHOICE = Gloss(CORRECTIONS["de"] + CERTAINTY["de"] + [
    (r"(?:die|meine) (?:endg[uü]ltige |richtige )?antwort (?:ist|lautet)", "the answer is"), (r"antwort", "answer"),
    (r"meine wahl (?:ist|f[aä]llt auf)", "my choice is"), (r"wahl", "choice"),
    (r"ich (?:w[aä]hle|nehme|entscheide mich f[uü]r|stimme f[uü]r)", "I choose"), (r"ich w[uü]rde sagen", "I'd say"),
    (r"ich bevorzuge", "I prefer"),
    (r"wenn ich (?:w[aä]hlen|mich entscheiden) m[uü]sste", "if forced"),
    (r"(?:ist|klingt|wirkt|scheint) (?:deutlich |viel |etwas |klar )?besser", "is better"),
    (r"(?:trifft es|passt|entspricht (?:dem|der) \w+) (?:deutlich |viel |etwas |klar )?besser", "is better"),
    (r"besser", "better"),
    (r"(?:der|die|das|den) erste(?:n|r|s)?", "the first"), (r"(?:der|die|das|den) zweite(?:n|r|s)?", "the second"),
    (r"erste(?:n|r|s)?", "first"), (r"zweite(?:n|r|s)?", "second"), (r"aufnahme", "recording"),
    (r"beschreibung", "description"), (r"ausschnitt", "clip"), (r"weder", "neither"), (r"noch", "nor"),
    (r"beide|beides", "both"), (r"keine(?:r|s|n)?", "neither"), (r"oder", "or"), (r"und", "and"),
    (r"aber|jedoch", "but"), (r"eigentlich|tats[aä]chlich", "actually"), (r"warte", "wait"), (r"nein", "no"),
    (r"ich wei[sß] (?:es )?nicht", "I don't know"), (r"nicht sicher", "not sure"), (r"nicht", "not"),
    (r"kein", "no"), (r"laut (?:dem |der )?(?:label|etikett|referenz)", "according to the label"),
    (r"sagt", "says"), (r"klingt|klingen", "sounds"), (r"unnat[uü]rlicher", "less natural"),
    (r"k[uü]nstlicher|synthetischer", "more artificial"), (r"leiser", "quieter"),
    (r"nat[uü]rlicher", "more natural"), (r"rausch[aä]rmer|ger[aä]usch[aä]rmer", "cleaner"),
    (r"verrauschter|rauschiger|rauschhaltiger|st[oö]rger[aä]uschreicher", "noisier"),
    (r"sauberer", "cleaner"), (r"klarer", "clearer"), (r"deutlich|viel", "much"),
    (r"(?:das|die) (?:referenz)?(?:label|etikett)", "the label"), (r"ich h[oö]re", "I hear"), (r"ist", "is"),
    (r"es", "it"), (r"ich", "I"), (r"der|die|das|den|dem", "the"), (r"also|daher|somit", "so"), (r"als", "than"),
    (r"wirkt", "sounds"), (r"eindeutig", "clearly"), (r"(?:viel )?weniger rauschen", "less noise"),
])
_FR_CHOICE = Gloss(CORRECTIONS["fr"] + CERTAINTY["fr"] + [
    (r"(?:la|ma) r[ée]ponse(?: finale| correcte)? est", "the answer is"), (r"r[ée]ponse", "answer"),
    (r"mon choix(?: final)? (?:est|se porte sur)", "my choice is"), (r"choix", "choice"), (r"nettement", "clearly"),
    (r"(?:correspond|colle) mieux", "fits better"),
    (r"je (?:choisis|choisirais|prends|prendrais|s[ée]lectionne|vote pour|dirais)(?: plut[ôo]t)?|j' opte pour",
     "I choose"),
    (r"je pr[ée]f[èe]re", "I prefer"), (r"si je devais choisir", "if forced"),
    (r"(?:est|sonne|semble|para[iî]t) (?:nettement |beaucoup |un peu |clairement )?(?:meilleure?|mieux)",
     "is better"), (r"meilleure?|mieux", "better"),
    (r"(?:le|la) premi(?:er|[èe]re)", "the first"), (r"(?:le|la) (?:deuxi[èe]me|seconde?)", "the second"),
    (r"premi(?:er|[èe]re)", "first"), (r"deuxi[èe]me|seconde?", "second"), (r"enregistrement", "recording"),
    (r"extrait", "clip"), (r"ni l'un ni l'autre|aucune?", "neither"), (r"ni", "nor"), (r"les deux", "both"),
    (r"ou", "or"), (r"et", "and"), (r"mais|cependant", "but"), (r"en fait", "actually"), (r"attends?", "wait"),
    (r"je ne sais pas", "I don't know"), (r"pas s[uû]re?", "not sure"), (r"ce n' est pas", "it is not"),
    (r"non(?=\s*[,.!:;-])", "no"),
    (r"n' est pas", "is not"), (r"pas", "not"), (r"ne|n'", ""), (r"c' est", "it is"), (r"dit|indique|affiche", "says"),
    (r"selon (?:l' |le |la )(?:[ée]tiquette|label|r[ée]f[ée]rence)", "according to the label"),
    (r"l' [ée]tiquette|le label", "the label"), (r"j' entends", "I hear"), (r"est", "is"), (r"je", "I"),
    (r"plus propres?", "cleaner"), (r"plus clair(?:e|s|es)?", "clearer"),
    (r"plus bruit[ée]e?s? que", "noisier than"), (r"plus propres? que", "cleaner than"),
    (r"plus naturel(?:le|s|les)? que", "more natural than"), (r"moins naturel(?:le|s|les)? que", "less natural than"),
    (r"plus naturel(?:le|s|les)?", "more natural"), (r"plus fid[èe]le", "more faithful"),
    (r"description", "description"),
    (r"moins de bruit de fond", "less background noise"), (r"moins de bruit", "less noise"), (r"avec", "with"),
    (r"semble|para[iî]t", "seems"), (r"sonne", "sounds"),
    (r"le|la|les|l'", "the"), (r"de la|du|des", "some"),
])

_BASE_ALIASES = {  # option (lower case) -> other words that name it
    "angry": ["anger", "angrily", "mad", "furious", "enojado", "enojada", "enfadado", "enfadada", "ira", "enojo",
              "rabia", "生气", "愤怒", "恼怒", "wütend", "wut", "zornig", "verärgert", "colère", "en colère", "fâché",
              "fâchée"],
    "happy": ["happiness", "joy", "joyful", "cheerful", "glad", "feliz", "alegre", "alegría", "felicidad", "开心",
              "高兴", "快乐", "喜悦", "glücklich", "fröhlich", "freude", "heureux", "heureuse", "joie", "joyeux"],
    "sad": ["sadness", "sorrow", "triste", "tristeza", "悲伤", "难过", "伤心", "traurig", "traurigkeit", "trauer",
            "tristesse"],
    "fearful": ["fear", "afraid", "scared", "frightened", "miedo", "temeroso", "temerosa", "asustado", "asustada",
                "恐惧", "害怕", "ängstlich", "angst", "furcht", "peur", "effrayé", "effrayée", "apeuré"],
    "disgust": ["disgusted", "disgusting", "asco", "disgustado", "disgustada", "asqueado", "asqueada", "厌恶", "恶心",
                "ekel", "angewidert", "dégoût", "dégoûté", "dégoûtée"],
    "surprised": ["surprise", "astonished", "sorpresa", "sorprendido", "sorprendida", "惊讶", "惊奇", "吃惊",
                  "überrascht", "überraschung", "surpris"],
    "calm": ["calmness", "calmly", "tranquil", "calma", "tranquilo", "tranquila", "calmado", "calmada", "平静",
             "冷静", "ruhig", "gelassen", "calme"],
    "neutral": ["neutrality", "neutro", "neutra", "中性", "中立", "neutre"],
    "english": ["inglés", "ingles", "英语", "英文", "englisch", "anglais"],
    "french": ["français", "francais", "francés", "frances", "法语", "法文", "französisch"],
    "german": ["deutsch", "alemán", "aleman", "德语", "德文", "allemand"],
    "japanese": ["日本語", "japonés", "japones", "日语", "日文", "japanisch", "japonais"],
    "spanish": ["español", "espanol", "castellano", "castilian", "西班牙语", "西班牙文", "spanisch", "espagnol"],
    "italian": ["italiano", "意大利语", "italienisch", "italien"],
    "portuguese": ["português", "portugués", "portugues", "葡萄牙语", "portugiesisch", "portugais"],
    "russian": ["русский", "ruso", "俄语", "俄文", "russisch", "russe"],
    "mandarin chinese": ["mandarin", "chinese", "chino", "chino mandarín", "chino mandarin", "mandarín", "中文",
                         "普通话", "汉语", "国语", "华语", "chinesisch", "chinois"],
    "cantonese": ["chinese", "粤语", "广东话", "cantonés"],
    "cantonese chinese": ["cantonese", "chinese", "粤语", "广东话", "cantonés"],
    "korean": ["한국어", "coreano", "韩语", "朝鲜语", "koreanisch", "coréen"],
    "arabic": ["العربية", "árabe", "arabe", "阿拉伯语", "arabisch"],
    "hindi": ["हिन्दी", "हिंदी", "印地语"],
    "dutch": ["nederlands", "neerlandés", "holandés", "荷兰语", "niederländisch", "néerlandais"],
    "polish": ["polski", "polaco", "波兰语", "polnisch", "polonais"],
    "turkish": ["türkçe", "turco", "土耳其语", "türkisch", "turc"],
    "swedish": ["svenska", "sueco", "瑞典语", "schwedisch", "suédois"],
    "male": ["man", "masculine", "hombre", "masculino", "男性", "男"],
    "female": ["woman", "feminine", "mujer", "femenino", "女性", "女"],
}

# ------------------------------------------------------------------------------------- Portuguese and Italian
_PT_CHOICE = Gloss(CORRECTIONS["pt"] + CERTAINTY["pt"] + [
    (r"segundo o r[óo]tulo|de acordo com o r[óo]tulo", "according to the label"), (r"o r[óo]tulo", "the label"),
    (r"(?:a|minha) resposta(?: final| correta)? (?-i:é)", "the answer is"),
    (r"resposta(?: final| correta)?", "answer"),
    (r"(?:a )?minha escolha(?: final)? (?-i:é)", "my choice is"), (r"escolha", "choice"),
    (r"(?:eu )?diria(?: que)?", "I'd say"),
    (r"(?:eu )?(?:escolho|escolheria|fico com|ficaria com|opto por|voto n[oa]|seleciono|selecionaria)", "I choose"),
    (r"(?:eu )?(?:prefiro|preferiria)", "I prefer"), (r"bem(?= mais)", "much"), (r"est[aá]", "is"),
    (r"se (?:eu )?tivesse (?:que|de) (?:escolher|decidir)", "if forced"),
    (r"(?:é|soa|parece|s[ãa]o|soam) (?:bem |muito |claramente |um pouco |ligeiramente )?melhor(?:es)?", "is better"),
    (r"melhor", "better"), (r"pior", "worse"), (r"(?-i:o|a) primeir[oa]", "the first"),
    (r"(?-i:o|a) segund[oa]", "the second"), (r"primeir[oa]", "first"), (r"segund[oa]", "second"),
    (r"op[çc][ãa]o", "option"), (r"grava[çc][ãa]o", "recording"), (r"amostra", "sample"), (r"trecho|clipe", "clip"),
    (r"descri[çc][ãa]o", "description"), (r"[áa]udio|faixa", "audio"),
    (r"(?:bem )?menos ru[íi]do de fundo", "less background noise"), (r"menos ru[íi]do", "less noise"),
    (r"mais limp[oa]s?", "cleaner"), (r"mais natura(?:l|is)", "more natural"),
    (r"mais fi(?:el|[ée]is)", "more faithful"),
    (r"nenhum(?:a)?(?: d[oa]s dois| das duas)?", "neither"), (r"ambos|ambas|os dois|as duas", "both"), (r"ou", "or"),
    (r"(?-i:e)", "and"), (r"mas|por[ée]m|embora", "but"),
    # a capital "A" before a noun is the article ("A segunda opção"), not option A
    (r"(?-i:A)(?= (?:segund|primeir|op[çc][ãa]o|descri[çc][ãa]o|grava[çc][ãa]o|emo[çc][ãa]o|resposta|melhor))",
     "the"), (r"n[ãa]o sei", "I don't know"),
    (r"n[ãa]o tenho certeza|n[ãa]o estou segur[oa]", "I am not sure"),
    (r"talvez(?: seja)?|pode ser|possivelmente", "maybe"),
    (r"provavelmente", "probably"), (r"na verdade", "actually"), (r"espera", "wait"), (r"n[ãa]o (?-i:é)", "it is not"),
    (r"n[ãa]o(?=\s*[,.!:;-])", "no"),
    (r"n[ãa]o", "not"), (r"(?-i:é)", "is"), (r"(?-i:o|a|os|as)", "the"), (r"parece", "seems"), (r"soa", "sounds"),
    (r"tem", "has"), (r"mais", "more"), (r"menos", "less"), (r"diz", "says"), (r"ou[çc]o", "I hear"),
    (r"igua(?:l|is)", "the same"), (r"do que", "than"), (r"idioma|l[íi]ngua", "language"),
    (r"emo[çc][ãa]o", "emotion"),
])
_IT_CHOICE = Gloss(CORRECTIONS["it"] + CERTAINTY["it"] + [
    (r"secondo l' etichetta", "according to the label"), (r"l' etichetta", "the label"),
    (r"(?:la )?(?:mia )?risposta(?: finale| corretta)? (?-i:è)", "the answer is"), (r"risposta(?: finale)?", "answer"),
    (r"(?:la )?mia scelta(?: finale)? (?-i:è)", "my choice is"), (r"scelta", "choice"),
    (r"quella giusta|quello giusto", "the right one"), (r"chiaramente", "clearly"), (r"senza dubbio", "definitely"),
    (r"(?:io )?(?:scelgo|sceglierei|opto per|voto per|seleziono|prendo|prenderei|vado con|andrei con|direi)",
     "I choose"),
    (r"(?:io )?(?:preferisco|preferirei)", "I prefer"), (r"se dovessi (?:scegliere|decidere)", "if forced"),
    (r"(?:è|suona|sembra|risulta) (?:molto |decisamente |chiaramente |leggermente |un po' )?migliore", "is better"),
    (r"migliore|meglio", "better"), (r"peggiore|peggio", "worse"), (r"(?-i:[Ii]l|[Ll][ao]) prim[oa]", "the first"),
    (r"(?-i:[Ii]l|[Ll][ao]) second[oa]", "the second"), (r"prim[oa]", "first"), (r"second[oa]", "second"),
    (r"opzione", "option"), (r"registrazione", "recording"), (r"campione", "sample"), (r"spezzone|frammento", "clip"),
    (r"descrizione", "description"), (r"traccia", "audio"),
    (r"(?:molto )?meno rumore di fondo", "less background noise"),
    (r"meno rumore", "less noise"), (r"più rumoros[oa] (?:del|della|dello|di)", "noisier than"),
    (r"più pulit[oa] (?:del|della|dello|di)", "cleaner than"), (r"più natural[ei] (?:del|della|dello|di)",
                                                                 "more natural than"),
    (r"più rumoros[oa]", "noisier"), (r"più pulit[oa]", "cleaner"), (r"più natural[ei]", "more natural"),
    (r"più fedele", "more faithful"), (r"né l' uno né l' altro|nessun[oa]?(?: dei due| delle due)?", "neither"),
    (r"entramb[ie]|tutti e due", "both"), (r"oppure|(?-i:o)", "or"), (r"(?-i:e)", "and"), (r"ma|però|tuttavia", "but"),
    (r"non lo so|non so", "I don't know"), (r"non sono sicur[oa]", "I am not sure"),
    (r"forse|potrebbe essere|magari|può darsi", "maybe"), (r"probabilmente", "probably"), (r"in realtà", "actually"),
    (r"aspetta", "wait"), (r"non (?-i:è)", "it is not"), (r"non", "not"), (r"(?-i:è)", "is"),
    (r"(?-i:[Ii]l|[Ll][ao]|[Ll]'|i|[Gg]li|[Ll]e)", "the"), (r"sembra", "seems"), (r"suona", "sounds"), (r"ha", "has"),
    (r"più", "more"), (r"meno", "less"), (r"dice", "says"), (r"sento", "I hear"), (r"lingua", "language"),
    (r"emozione", "emotion"), (r"(?-i:di|del|della|dello|dell')", "of"),
])

# --------------------------------------------------------------------------------------------------- Russian
_RU_CHOICE = Gloss(CORRECTIONS["ru"] + CERTAINTY["ru"] + [
    (r"(?:по|согласно) (?:метке|ярлыку)", "according to the label"), (r"метка|ярлык", "the label"),
    (r"(?:мой )?(?:окончательный |итоговый |правильный )?ответ", "answer"), (r"(?:мой )?выбор", "choice"),
    (r"(?:я )?(?:выбираю|выбрал[аи]?|выберу|выбрал[аи]? бы|голосую за|остановлюсь на|беру)", "I choose"),
    (r"(?:я )?(?:предпочитаю|предпоч[её]л[аи]? бы)", "I prefer"),
    (r"если (?:бы )?(?:пришлось|нужно|надо)(?: было)? выб(?:ирать|рать)", "if forced"),
    (r"(?:(?:звучит|кажется|выглядит) )?(?:намного |гораздо |явно |чуть |немного |значительно )?лучше", "is better"),
    (r"хуже", "is worse"), (r"(?:гораздо |намного )?(?:точнее|вернее|правильнее)", "is better"),
    (r"перв(?:ый|ая|ое|ого|ую|ой|ом|ому)", "the first"),
    (r"втор(?:ой|ая|ое|ого|ую|ом|ому)", "the second"), (r"вариант(?:а|у|ом|е)?", "option"),
    (r"запис(?:ь|и|ью)", "recording"), (r"(?:аудио)?фрагмент(?:а|у|ом|е)?|клип(?:а|у|ом|е)?|ролик(?:а|е)?", "clip"),
    (r"аудио(?:дорожк\w+)?|дорожк\w+", "audio"), (r"описани(?:е|я|ю|ем|и)", "description"),
    (r"образ(?:ец|ца|цу|це)", "sample"), (r"ни (?:тот|один),? ни другой|ни один", "neither"), (r"оба|обе", "both"),
    (r"или", "or"), (r"и", "and"), (r"но|однако|хотя", "but"), (r"не знаю", "I don't know"),
    (r"не уверен[а]?", "I am not sure"), (r"может быть|возможно|вероятно|пожалуй", "maybe"), (r"наверное", "probably"),
    (r"на самом деле", "actually"), (r"подожди(?:те)?", "wait"), (r"не", "not"), (r"нет", "no"),
    (r"это", "it is"), (r"(?:звучит )?(?:заметно |намного |гораздо )?шумнее", "is noisier"),
    (r"(?:звучит )?(?:заметно |намного |гораздо )?чище", "is cleaner"),
    (r"естественнее|более естественн\w+", "more natural"),
    (r"более искусственн\w+|искусственнее", "more artificial"), (r"шумнее", "noisier"),
    (r"(?:гораздо |намного )?меньше (?:фонового )?шума", "less background noise"), (r"больше шума", "more noise"),
    (r"я слышу", "I hear"), (r"(?-i:а)", "but"), (r"может", "maybe"), (r",? чем", "than"),
    (r"чем", "than"), (r"язык", "language"), (r"эмоция", "emotion"), (r"звучит", "sounds"),
])

# ----------------------------------------------------------------------------------------- Japanese and Korean
_JA_CHOICE = Gloss(CORRECTIONS["ja"] + CERTAINTY["ja"] + [
    ("答えは", "the answer is "), ("回答は", "the answer is "), ("正解は", "the answer is "), ("答え", "answer"),
    ("回答", "answer"), ("を選びます", " is my choice"), ("を選択します", " is my choice"),
    ("を選ぶ", " is my choice"),
    ("にします", " is my choice"), ("を選びました", " is my choice"), ("を推します", " is my choice"),
    ("の方が良い", " is better"), ("のほうが良い", " is better"), ("の方がいい", " is better"),
    ("のほうがいい", " is better"), ("の方が優れ", " is better"), ("が良い", " is better"), ("がいい", " is better"),
    ("が優れている", " is better"), ("の方がきれい", " is cleaner"), ("の方がクリア", " is clearer"),
    ("の方が自然", " is more natural"), ("のほうが自然", " is more natural"), ("が自然", " is more natural"),
    ("の方が忠実", " is more faithful"),
    ("の方が適切", " is better"), ("のほうが適切", " is better"), ("の方がノイズが少な", " has less noise"),
    ("のほうがノイズが少な", " has less noise"),
    ("の方が", " "), ("のほうが", " "),
    ("1番", " number 1 "), ("2番", " number 2 "),  # "2番の音声": audio no. 2
    ("1番の音声", " audio 1 "), ("2番の音声", " audio 2 "),
    ("1番のクリップ", " clip 1 "), ("2番のクリップ", " clip 2 "),
    ("ノイズが少な", " has less noise"),
    ("最初の", "the first "), ("最初", "the first"), ("1番目の", "the first "), ("一番目の", "the first "),
    ("1つ目の", "the first "), ("一つ目の", "the first "), ("2番目の", "the second "), ("二番目の", "the second "),
    ("2つ目の", "the second "), ("二つ目の", "the second "), ("前者", "the former"), ("後者", "the latter"),
    ("音声", "audio "), ("オーディオ", "audio "), ("録音", "recording "), ("クリップ", "clip "),
    ("説明", "description "), ("選択肢", "option "), ("どちらも", "both"), ("両方", "both"), ("または", " or "),
    ("か、", " or "),
    ("でも", " but "), ("しかし", " but "), ("ですが", " but "), ("が、", " but "), ("かもしれません", " maybe"),
    ("かもしれない", " maybe"), ("たぶん", "maybe "), ("多分", "maybe "), ("おそらく", "probably "),
    ("判断が難しい", "hard to tell"), ("わかりません", "I don't know"), ("分かりません", "I don't know"),
    ("言語は", "the language is "), ("感情は", "the emotion is "), ("だと思います", ""), ("と思います", ""),
    ("です", ""), ("だ", ""), ("この", ""), ("の", " "), ("は", " "),
], cjk=True)
_KO_CHOICE = Gloss(CORRECTIONS["ko"] + CERTAINTY["ko"] + [
    ("정답은", "the answer is "), ("답은", "the answer is "), ("답변은", "the answer is "), ("정답", "answer"),
    ("답변", "answer"), ("답", "answer"), ("선택합니다", " is my choice"), ("선택하겠습니다", " is my choice"),
    ("고르겠습니다", " is my choice"), ("고릅니다", " is my choice"), ("더 좋습니다", " is better"),
    ("더 낫습니다", " is better"), ("더 좋아요", " is better"), ("더 나아요", " is better"), ("더 낫다", " is better"),
    ("더 자연스럽", " is more natural"), ("더 자연스러", " is more natural"),
    ("1번", " number 1 "), ("2번", " number 2 "),  # "2번 오디오": audio no. 2
    ("1번 오디오", " audio 1 "), ("2번 오디오", " audio 2 "), ("1번 음성", " audio 1 "), ("2번 음성", " audio 2 "),
    ("잡음이 훨씬 적", " has much less noise"),
    ("소음이 훨씬 적", " has much less noise"), ("더 정확", " is better"), ("더 깨끗", " is cleaner"),
    ("더 충실", " is more faithful"),
    ("소음이 더 적", " has less noise"), ("잡음이 더 적", " has less noise"), ("첫 번째", "the first"),
    ("첫번째", "the first"), ("두 번째", "the second"), ("두번째", "the second"), ("전자", "the former"),
    ("후자", "the latter"), ("오디오", "audio "), ("음성", "audio "), ("녹음", "recording "), ("클립", "clip "),
    ("설명", "description "), ("선택지", "option "), ("옵션", "option "), ("둘 다", "both"), ("또는", " or "),
    ("아니면", " or "), ("하지만", " but "), ("그러나", " but "), ("지만", " but"), ("아마", "maybe "),
    ("일 수도 있", " maybe"), ("확실하지 않", "not sure"), ("잘 모르겠", "I don't know"), ("모르겠", "I don't know"),
    ("언어는", "the language is "), ("감정은", "the emotion is "), ("입니다", ""), ("이에요", ""), ("예요", ""),
    ("이다", ""), ("이", " "), ("가", " "), ("는", " "), ("은", " "), ("를", " "), ("을", " "),
], cjk=True)
_AFTER_OPTION = r"((?<![A-Za-z])[A-Za-z](?![A-Za-z])\)?|(?<!\d)[12](?!\d)\)?)"
_JA_NOT = re.compile(_AFTER_OPTION + r"\s*(?:で|じゃ)(?:は)?(?:ない|ありません|なく)")
_KO_NOT = re.compile(_AFTER_OPTION + r"\s*(?:가|이|는|은)?\s*(?:아닙니다|아니다|아니에요|아니요|아님)")


_DE_VERB_LAST = re.compile(r"(?i:\bich\s+w[uü]rde\s+(?:mich\s+f[uü]r\s+|mich\s+eher\s+f[uü]r\s+|eher\s+)?)"
                           r"([^.,;:!?\n]{1,60}?)\s+(?i:w[aä]hlen|nehmen|ausw[aä]hlen|bevorzugen|entscheiden|vorziehen)"
                           r"\b")


_OPT = r"((?<![A-Za-z])[AB](?![A-Za-z])|(?<!\d)[12](?!\d))"
_ZH_NOISE = r"(?:的)?(?:背景)?(?:噪音|杂音|噪声|底噪|嘈杂声)"
_KO_NOT_AFTER = r"(?![가-힣]{0,4}\s*(?:지\s*않|지\s*못|다고\s*(?:할|볼)\s*수\s*없))"  # "낫지 않습니다": not better
# Japanese: a statement denied at its end ("Aの方が良いとは言えません": one cannot say A is better) denies it whole
_JA_DENIED = re.compile(r"^(.*?)(?:とは言えません|とは言えない|とは思いません|とは思わない|わけではありません|"
                        r"わけではない)")
_KO_NOISE = r"(?:배경\s*)?(?:잡음|소음|노이즈)(?:이|가)?"
_COMPARED = {
    "zh": [(re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*" + _ZH_NOISE + r"(?:更|还|要)?(?:大|多|明显|重|响)"),
            "is noisier than"),
           (re.compile(_OPT + _ZH_NOISE + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?(?:大|多|明显|重|响)"),
            "is noisier than"),
           (re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?(?:吵|嘈杂)"), "is noisier than"),
           (re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?(?:干净|纯净)"), "is cleaner than"),
           (re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?自然"), "is more natural than"),
           (re.compile(_OPT + r"\s*比\s*" + _OPT + r"\s*(?:更|还|要)?(?:好|佳|优)"), "is better than")],
    "ko": [(re.compile(_OPT + r"\s*(?:가|이|는|은|의)?\s*" + _OPT + r"\s*보다\s*" + _KO_NOISE
                       + r"\s*(?:더|훨씬)?\s*(?:많|크|심)" + _KO_NOT_AFTER), "is noisier than"),
           (re.compile(_OPT + r"\s*(?:가|이|는|은)?\s*" + _OPT + r"\s*보다\s*(?:더|훨씬)?\s*깨끗" + _KO_NOT_AFTER),
            "is cleaner than"),
           (re.compile(_OPT + r"\s*(?:가|이|는|은)?\s*" + _OPT + r"\s*보다\s*(?:더|훨씬)?\s*자연스" + _KO_NOT_AFTER),
            "is more natural than"),
           (re.compile(_OPT + r"\s*(?:가|이|는|은)?\s*" + _OPT + r"\s*보다\s*(?:더|훨씬)?\s*(?:좋|낫)"
                       + _KO_NOT_AFTER),
            "is better than")],
}


def particles_dropped(text: str, lang: str) -> str:
    """A Japanese or Korean negation after an option moved before it ("Aではありません" -> "not A"); a German
    choice whose verb comes last ("Ich würde die zweite wählen") put in the order the gloss reads ("ich wähle die
    zweite")."""
    if lang == "de":
        return _DE_VERB_LAST.sub(r"ich wähle \1", text)
    if lang == "ru":  # "B шумнее, чем A": the comparison's comma
        return re.sub(r",\s*(?=чем\b)", " ", text)
    if lang in _COMPARED:  # "A比B噪音更大", "B가 A보다 잡음이 많아요": the comparison in English order
        for pattern, english in _COMPARED[lang]:
            text = pattern.sub(lambda m, e=english: f" {m.group(1)} {e} {m.group(2)} ", text)
    if lang == "ja":
        text = _JA_DENIED.sub(r"it is not the case that \1", text)
    negation = {"ja": _JA_NOT, "ko": _KO_NOT}.get(lang)
    return negation.sub(r"not \1 ", text) if negation else text


# a reply too short to tell its language ("Eindeutig A.", "A, anzi B."): every Latin-script language's words of
# certainty and correction at once, longest first (none of them is an English word)
LATIN_GLOSS = Gloss(sorted((e for lang in LATIN for e in CORRECTIONS[lang] + CERTAINTY[lang]),
                           key=lambda e: -len(e[0])))
CHOICE_GLOSSES = {"es": _ES_CHOICE, "zh": _ZH_CHOICE, "de": _DE_CHOICE, "fr": _FR_CHOICE, "pt": _PT_CHOICE,
                  "it": _IT_CHOICE, "ru": _RU_CHOICE, "ja": _JA_CHOICE, "ko": _KO_CHOICE}

_MORE_ALIASES = {  # Portuguese, Italian, Russian (stems: a form that starts a word), Japanese, Korean
    "angry": ["raiva", "irritado", "irritada", "zangado", "zangada", "bravo", "brava", "rabbia", "arrabbiato",
              "arrabbiata", "злост", "злой", "злая", "злится", "гнев", "сердит", "раздраж", "怒り", "怒って", "怒った",
              "화난", "화가 난", "분노", "화남"],
    "happy": ["feliz", "felicidade", "alegria", "contente", "felice", "felicità", "gioia", "allegro", "allegra",
              "радост", "счаст", "весел", "幸せ", "嬉しい", "うれしい", "喜び", "楽しい", "행복", "기쁨", "기쁜",
              "즐거운"],
    "sad": ["triste", "tristeza", "tristezza", "грусть", "грустн", "печал", "悲しい", "悲しみ", "悲しげ", "悲しん",
            "悲しそう", "슬픔", "슬픈", "슬퍼"],
    "fearful": ["medo", "assustado", "assustada", "paura", "spaventato", "spaventata", "impaurito", "страх",
                "испуган", "боязн", "恐怖", "怖い", "怖が", "두려움", "공포", "무서", "겁먹"],
    "disgust": ["nojo", "repulsa", "disgusto", "disgustato", "disgustata", "отвращен", "брезглив", "嫌悪",
                "혐오", "역겨"],
    "surprised": ["surpreso", "surpresa", "sorpreso", "sorpresa", "stupore", "удивлен", "удивлён", "удивлени",
                  "驚き", "驚いて", "驚いた", "놀람", "놀란", "놀라"],
    "calm": ["calmo", "calma", "tranquilo", "tranquila", "sereno", "serena", "tranquillo", "tranquilla", "спокой",
             "спокоен",
             "穏やか", "落ち着", "冷静", "차분", "평온", "침착"],
    "neutral": ["neutro", "neutra", "нейтральн", "中立", "ニュートラル", "중립"],
    "english": ["inglês", "inglese", "английск", "英語", "영어"],
    "french": ["francês", "francese", "французск", "フランス語", "프랑스어"],
    "german": ["alemão", "tedesco", "немецк", "ドイツ語", "독일어"],
    "japanese": ["japonês", "giapponese", "японск", "일본어"],
    "spanish": ["espanhol", "spagnolo", "испанск", "スペイン語", "스페인어"],
    "italian": ["italiano", "итальянск", "イタリア語", "이탈리아어"],
    "portuguese": ["português", "portoghese", "португальск", "ポルトガル語", "포르투갈어"],
    "russian": ["russo", "русск", "ロシア語", "러시아어"],
    "mandarin chinese": ["chinês", "mandarim", "cinese", "mandarino", "китайск", "мандарин", "путунхуа", "中国語",
                         "普通語", "중국어", "만다린"],
    "cantonese": ["cantonês", "cantonese", "кантонск", "広東語", "광동어"],
    "korean": ["coreano", "корейск", "韓国語", "한국어"],
    "arabic": ["árabe", "arabo", "арабск", "アラビア語", "아랍어"],
    "hindi": ["хинди", "ヒンディー語", "힌디어"],
    "dutch": ["holandês", "neerlandês", "olandese", "нидерландск", "голландск", "オランダ語", "네덜란드어"],
    "polish": ["polonês", "polacco", "польск", "ポーランド語", "폴란드어"],
    "turkish": ["turco", "турецк", "トルコ語", "터키어"],
    "swedish": ["sueco", "svedese", "шведск", "スウェーデン語", "스웨덴어"],
}
ALIASES = {label: forms + [f for f in _MORE_ALIASES.get(label, []) if f not in forms]
           for label, forms in _BASE_ALIASES.items()}
ALIASES["cantonese chinese"] += [f for f in _MORE_ALIASES["cantonese"] if f not in ALIASES["cantonese chinese"]]
