"""Labelled answers for every rule-based reader, in English, Spanish and Chinese (issue 17, "Reading answers").

Each case is ``(reader, language, input, expected, batch)``:

- ``sync`` / ``existence`` / ``consistency``: ``input`` is a free-form answer to the Thud question, ``expected`` the
  fields of ``omniaudit.evaluation.interventions.extract.extract`` (``NO_ANSWER``: every field None);
- ``options``: ``input`` is ``(answer, options, question)`` for ``parse_answer`` (``question`` the item's prompt, or
  None), ``expected`` the option or None;
- ``verdict``: ``input`` is the grading judge's answer for ``parse_verdict``, ``expected`` "Yes", "No" or None;
- ``em``: ``input`` is ``(prediction, ground truth)`` for the normalised exact match, ``expected`` True (the same
  string once normalised) or False (a different answer: left to the LLM judge, never a match).

``batch``: ``dev`` cases were written and labelled before the readers of issue 17 were changed (the "before" numbers
are on them); ``held-out`` cases were written after the change, labelled before being run, and not used to tune the
readers. Labels follow the readers' contracts: an answer that states no choice (off-topic, empty, tokenizer noise, a
bare topic word such as "Audio", the question echoed back, a refusal, a hedge between options) has no reading.
"""

from __future__ import annotations

NO_ANSWER = None
SYNCED = {"synced": True, "direction": "none", "offset_s": 0.0}
NO_SYNC = {"synced": None, "direction": None, "offset_s": None}


def desync(direction: str, offset: float | None = None) -> dict:
    return {"synced": False, "direction": direction, "offset_s": offset}


def state(value: str | None) -> dict:
    return {"audio_state": value}


def match(value: str | None) -> dict:
    return {"match": value}


SYNC_Q = ("Watch the video and listen to its audio. Is the sound of the main event synchronized with what you see? "
          "Answer 'synchronized' or 'not synchronized'; if not, say whether the audio is early or delayed and by "
          "about how many seconds.")
AB = ["A", "B"]
N12 = ["1", "2"]
EMOTIONS = ["neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"]
LANGUAGES = ["English", "French", "German", "Japanese", "Spanish", "Italian", "Portuguese", "Russian",
             "Mandarin Chinese", "Korean", "Arabic", "Hindi", "Dutch", "Polish", "Turkish", "Swedish"]
Q_CLEAN = ("The first audio is clip A and the second audio is clip B. Which clip has cleaner audio, with less "
           "background noise? Answer with A or B only.")
Q_NATURAL = ("The first audio is clip A and the second audio is clip B. Which clip sounds more natural? Answer with A "
             "or B only.")
Q_NATURAL_12 = "Audio 1 and audio 2 follow. Which audio sounds more natural? Answer with 1 or 2 only."
Q_PREFER = ("Watch the video and listen to its audio. Two descriptions of the emotional state of the person in the "
            "clip follow.\n\nDescription A: calm and content\n\nDescription B: tense and angry\n\nWhich description "
            "is more faithful to the person's emotion as seen and heard in the clip, and would be preferred by a "
            "human annotator? Answer with a single letter: A or B.")
Q_EMOTION = "Listen to the audio clip. Which emotion does the speaker express? Answer with exactly one of: " + \
    ", ".join(EMOTIONS) + "."
Q_LANGUAGE = "Listen to the audio clip. Which language is spoken? Answer with exactly one of: " + \
    ", ".join(LANGUAGES) + "."


def ab(text: str, question: str | None = None) -> tuple:
    return (text, AB, question)


def n12(text: str, question: str | None = None) -> tuple:
    return (text, N12, question)


def emo(text: str) -> tuple:
    return (text, EMOTIONS, Q_EMOTION)


def lang(text: str) -> tuple:
    return (text, LANGUAGES, Q_LANGUAGE)


DEV: list[tuple] = [
    # ------------------------------------------------------------------------------------------------ sync, en
    ("sync", "en", "The sound does not line up with the visuals; it is early by about 2 seconds.",
     desync("early", -2.0)),
    ("sync", "en", "They don't line up: the thud comes roughly two seconds after the ball lands.",
     desync("delay", 2.0)),
    ("sync", "en", "The audio doesn't coincide with the impact; it arrives late.", desync("delay")),
    ("sync", "en", "The bang and the collision do not occur at the same time.", desync("none")),
    ("sync", "en", "The sound and the picture never match up in time; the audio runs ahead.", desync("early")),
    ("sync", "en", "Not synchronized. Delayed by ~1.5 s.", desync("delay", 1.5)),
    ("sync", "en", "synchronized", SYNCED),
    ("sync", "en", "not synchronized", desync("none")),
    ("sync", "en", "Yes, they line up.", SYNCED),
    ("sync", "en", "The audio is lagging; the clap is heard about 2 s after the hands meet.", desync("delay", 2.0)),
    ("sync", "en", "The sound comes first and the visible impact follows about 2 seconds later.",
     desync("early", -2.0)),
    ("sync", "en", "It's out of sync by about 500 ms; the audio is early.", desync("early", -0.5)),
    ("sync", "en", "No noticeable offset; the timing is spot on.", SYNCED),
    ("sync", "en", "The audio is not early and not late; it is synchronized.", SYNCED),
    ("sync", "en", "I would say the sound is delayed, although only slightly.", desync("delay")),
    ("sync", "en", "The sound does not happen at the same moment as the impact; it comes around 2 seconds early.",
     desync("early", -2.0)),
    ("sync", "en", "The capital of France is Paris.", NO_SYNC),
    ("sync", "en", "", NO_SYNC),
    ("sync", "en", "Audio", NO_SYNC),
    ("sync", "en", "asdkj qwpeo zmxn", NO_SYNC),
    ("sync", "en", SYNC_Q, NO_SYNC),
    ("sync", "en", "I'm sorry, but I can't analyze the audio of this video.", NO_SYNC),
    ("sync", "en", "It could be synchronized or not; I can't really tell.", NO_SYNC),
    ("sync", "en", "Answer: ", NO_SYNC),
    ("sync", "en", "<unk><unk><unk> Audio", NO_SYNC),
    # ------------------------------------------------------------------------------------------------ sync, es
    ("sync", "es", "El audio está sincronizado con el vídeo.", SYNCED),
    ("sync", "es", "No está sincronizado: el sonido llega con unos 2 segundos de retraso.", desync("delay", 2.0)),
    ("sync", "es", "El sonido se adelanta aproximadamente 1,5 segundos a la imagen.", desync("early", -1.5)),
    ("sync", "es", "Sí, está sincronizado.", SYNCED),
    ("sync", "es", "No, el audio va retrasado.", desync("delay")),
    ("sync", "es", "El golpe se oye antes de que la pelota toque el suelo.", desync("early")),
    ("sync", "es", "El sonido y la imagen no coinciden; el audio llega tarde.", desync("delay")),
    ("sync", "es", "Están desincronizados.", desync("none")),
    ("sync", "es", "No hay ningún retraso perceptible.", SYNCED),
    ("sync", "es", "El vídeo va retrasado respecto al audio unos dos segundos.", desync("early", -2.0)),
    ("sync", "es", "Sincronizado.", SYNCED),
    ("sync", "es", "No sincronizado; el audio se adelanta 2 s.", desync("early", -2.0)),
    ("sync", "es", "La capital de Francia es París.", NO_SYNC),
    ("sync", "es", "No estoy seguro de si está sincronizado.", NO_SYNC),
    ("sync", "es", "Lo siento, no puedo analizar el audio.", NO_SYNC),
    ("sync", "es", "¿El sonido está sincronizado con la imagen?", NO_SYNC),
    # ------------------------------------------------------------------------------------------------ sync, zh
    ("sync", "zh", "音频与画面同步。", SYNCED),
    ("sync", "zh", "不同步，声音比画面晚了大约2秒。", desync("delay", 2.0)),
    ("sync", "zh", "声音提前了大约1.5秒。", desync("early", -1.5)),
    ("sync", "zh", "是的，声音和画面是同步的。", SYNCED),
    ("sync", "zh", "不同步。音频延迟。", desync("delay")),
    ("sync", "zh", "撞击声在球落地之前就出现了。", desync("early")),
    ("sync", "zh", "声音和画面对不上，音频慢了两秒。", desync("delay", 2.0)),
    ("sync", "zh", "没有明显的延迟。", SYNCED),
    ("sync", "zh", "画面比声音慢了大约2秒。", desync("early", -2.0)),
    ("sync", "zh", "音画不同步。", desync("none")),
    ("sync", "zh", "同步", SYNCED),
    ("sync", "zh", "声音滞后于画面约0.5秒。", desync("delay", 0.5)),
    ("sync", "zh", "法国的首都是巴黎。", NO_SYNC),
    ("sync", "zh", "我无法判断是否同步。", NO_SYNC),
    ("sync", "zh", "抱歉，我无法分析音频。", NO_SYNC),
    ("sync", "zh", "音频", NO_SYNC),
    # ------------------------------------------------------------------------------------------- existence, en
    ("existence", "en", "I hear a dog barking and a car door closing.", state("audio_described")),
    ("existence", "en", "There is no sound; the clip is completely silent.", state("muted")),
    ("existence", "en", "Silence.", state("muted")),
    ("existence", "en", "The audio is silent throughout.", state("muted")),
    ("existence", "en", "Only faint wind noise can be heard.", state("audio_described")),
    ("existence", "en", "There's no music, but someone is talking in the background.", state("audio_described")),
    ("existence", "en", "A man is chopping vegetables on a wooden board.", state("visual_only")),
    ("existence", "en", "The video shows a girl riding a bicycle along a beach.", state("visual_only")),
    ("existence", "en", "I can't hear anything at all.", state("muted")),
    ("existence", "en", "Soft piano music.", state("audio_described")),
    ("existence", "en", "Birds chirping.", state("audio_described")),
    ("existence", "en", "The soundtrack is empty.", state("muted")),
    ("existence", "en", "No audio.", state("muted")),
    ("existence", "en", "Crowd cheering and a whistle.", state("audio_described")),
    ("existence", "en", "It is quiet apart from the ticking of a clock.", state("audio_described")),
    ("existence", "en", "Nothing is audible in this clip.", state("muted")),
    ("existence", "en", "Audio", state(None)),
    ("existence", "en", "Sound.", state(None)),
    ("existence", "en", "Describe the audio you hear in this video.", state(None)),
    ("existence", "en", "The capital of France is Paris.", state(None)),
    ("existence", "en", "", state(None)),
    ("existence", "en", "qzx vbnm plk wrt", state(None)),
    ("existence", "en", "I am not able to process audio.", state(None)),
    ("existence", "en", "Audio Audio Audio Audio", state(None)),
    ("existence", "en", "The audio?", state(None)),
    ("existence", "en", "What audio do you mean?", state(None)),
    ("existence", "en", "<|endoftext|>Audio", state(None)),
    ("existence", "en", "Lorem ipsum dolor sit amet, consectetur adipiscing elit.", state(None)),
    # ------------------------------------------------------------------------------------------- existence, es
    ("existence", "es", "Se oye el ladrido de un perro y el motor de un coche.", state("audio_described")),
    ("existence", "es", "El vídeo no tiene sonido.", state("muted")),
    ("existence", "es", "Silencio total.", state("muted")),
    ("existence", "es", "No se oye nada.", state("muted")),
    ("existence", "es", "Se escucha música de piano suave.", state("audio_described")),
    ("existence", "es", "Un hombre corta verduras en una tabla de madera.", state("visual_only")),
    ("existence", "es", "El clip está en silencio, salvo por un zumbido leve.", state("audio_described")),
    ("existence", "es", "No hay música, pero alguien habla de fondo.", state("audio_described")),
    ("existence", "es", "El audio está silenciado.", state("muted")),
    ("existence", "es", "Hay viento y pájaros cantando.", state("audio_described")),
    ("existence", "es", "Audio", state(None)),
    ("existence", "es", "Describe el audio que oyes en este vídeo.", state(None)),
    ("existence", "es", "La capital de Francia es París.", state(None)),
    ("existence", "es", "No lo sé.", state(None)),
    # ------------------------------------------------------------------------------------------- existence, zh
    ("existence", "zh", "我听到狗叫声和汽车开门的声音。", state("audio_described")),
    ("existence", "zh", "视频没有声音。", state("muted")),
    ("existence", "zh", "完全静音。", state("muted")),
    ("existence", "zh", "什么也听不到。", state("muted")),
    ("existence", "zh", "背景里有轻柔的钢琴音乐。", state("audio_described")),
    ("existence", "zh", "一个男人在木板上切菜。", state("visual_only")),
    ("existence", "zh", "除了微弱的风声，视频是无声的。", state("audio_described")),
    ("existence", "zh", "没有音乐，但有人在说话。", state("audio_described")),
    ("existence", "zh", "有鸟叫声和流水声。", state("audio_described")),
    ("existence", "zh", "视频画面显示一个女孩在海边骑自行车。", state("visual_only")),
    ("existence", "zh", "音频", state(None)),
    ("existence", "zh", "描述你在这个视频中听到的音频。", state(None)),
    ("existence", "zh", "法国的首都是巴黎。", state(None)),
    ("existence", "zh", "我不知道。", state(None)),
    # ----------------------------------------------------------------------------------------- consistency, en
    ("consistency", "en", "The barking I hear fits the dog on screen.", match("match")),
    ("consistency", "en", "The sound of an engine doesn't fit a quiet library.", match("mismatch")),
    ("consistency", "en", "The audio seems to come from another video entirely.", match("mismatch")),
    ("consistency", "en", "The applause matches the concert scene.", match("match")),
    ("consistency", "en", "I see a beach but hear a busy office; they don't belong together.", match("mismatch")),
    ("consistency", "en", "There's nothing inconsistent: the splash goes with the dive.", match("match")),
    ("consistency", "en", "The audio is consistent with what is shown.", match("match")),
    ("consistency", "en", "The sounds don't correspond to the action on screen.", match("mismatch")),
    ("consistency", "en", "A woman waters plants in a garden.", match("none")),
    ("consistency", "en", "The video shows a chef slicing onions.", match("none")),
    ("consistency", "en", "I see a violinist and hear violin music.", match("match")),
    ("consistency", "en", "The sound and the scene clearly mismatch.", match("mismatch")),
    ("consistency", "en", "I don't hear anything; I see a man walking a dog.", match("none")),
    ("consistency", "en", "Audio", match(None)),
    ("consistency", "en", "Describe what you see in the video and what you hear in the audio.", match(None)),
    ("consistency", "en", "The capital of France is Paris.", match(None)),
    ("consistency", "en", "", match(None)),
    ("consistency", "en", "Sound sound sound sound", match(None)),
    ("consistency", "en", "zzkq mmbl trr", match(None)),
    ("consistency", "en", "I'm not sure whether the audio goes with the video.", match(None)),
    ("consistency", "en", "Sorry, I cannot listen to audio.", match(None)),
    # ----------------------------------------------------------------------------------------- consistency, es
    ("consistency", "es", "El sonido coincide con lo que se ve.", match("match")),
    ("consistency", "es", "El audio no corresponde a la imagen.", match("mismatch")),
    ("consistency", "es", "El ladrido encaja con el perro que aparece en pantalla.", match("match")),
    ("consistency", "es", "El sonido parece ser de otro vídeo.", match("mismatch")),
    ("consistency", "es", "Veo una playa, pero se oye una oficina; no tiene sentido.", match("mismatch")),
    ("consistency", "es", "Una mujer riega las plantas del jardín.", match("none")),
    ("consistency", "es", "Lo que se oye es coherente con la escena.", match("match")),
    ("consistency", "es", "El audio no concuerda con el vídeo.", match("mismatch")),
    ("consistency", "es", "Audio", match(None)),
    ("consistency", "es", "Describe lo que ves en el vídeo y lo que oyes en el audio.", match(None)),
    ("consistency", "es", "No estoy seguro.", match(None)),
    ("consistency", "es", "La capital de Francia es París.", match(None)),
    # ----------------------------------------------------------------------------------------- consistency, zh
    ("consistency", "zh", "声音和画面一致。", match("match")),
    ("consistency", "zh", "音频和画面不匹配。", match("mismatch")),
    ("consistency", "zh", "狗叫声与画面中的狗相符。", match("match")),
    ("consistency", "zh", "这段声音似乎来自另一个视频。", match("mismatch")),
    ("consistency", "zh", "画面是海滩，但听到的是办公室的声音，对不上。", match("mismatch")),
    ("consistency", "zh", "一个女人在花园里浇花。", match("none")),
    ("consistency", "zh", "我听到小提琴声，画面里有人在拉小提琴，很吻合。", match("match")),
    ("consistency", "zh", "声音与视频内容不符。", match("mismatch")),
    ("consistency", "zh", "音频", match(None)),
    ("consistency", "zh", "描述你在视频中看到的内容和在音频中听到的内容。", match(None)),
    ("consistency", "zh", "我不确定。", match(None)),
    ("consistency", "zh", "法国的首都是巴黎。", match(None)),
    # --------------------------------------------------------------------------------------------- options, en
    ("options", "en", ab("Audio 2 is better."), "B"),
    ("options", "en", ab("The second one."), "B"),
    ("options", "en", ab("The first clip has less background noise.", Q_CLEAN), "A"),
    ("options", "en", ab("Option (B) is better."), "B"),
    ("options", "en", ab("Both are similar, but if forced: A."), "A"),
    ("options", "en", ab("Clip 1."), "A"),
    ("options", "en", ab("I'd pick the first recording."), "A"),
    ("options", "en", ab("Description B is more faithful to the emotion.", Q_PREFER), "B"),
    ("options", "en", ab("B."), "B"),
    ("options", "en", ab("My answer is A because it has less hiss."), "A"),
    ("options", "en", ab("The latter."), "B"),
    ("options", "en", ab("Second clip."), "B"),
    ("options", "en", ab("Clip B sounds more natural.", Q_NATURAL), "B"),
    ("options", "en", ab("Clip A is noisier, so I pick B."), "B"),
    ("options", "en", ab("Clip A is noisier than clip B.", Q_CLEAN), None),
    ("options", "en", ab("Both clips sound the same to me."), None),
    ("options", "en", ab("A or B"), None),
    ("options", "en", ab("I can't decide between the first and the second."), None),
    ("options", "en", ab("Which clip has cleaner audio?"), None),
    ("options", "en", ab(""), None),
    ("options", "en", ab("Audio"), None),
    ("options", "en", ab("It depends on the listener."), None),
    ("options", "en", ab("The first and second clips are equally noisy."), None),
    ("options", "en", ab("Answer with A or B only."), None),
    ("options", "en", n12("2"), "2"),
    ("options", "en", n12("Audio 1 sounds more natural.", Q_NATURAL_12), "1"),
    ("options", "en", n12("The second one is more natural.", Q_NATURAL_12), "2"),
    ("options", "en", n12("I choose audio 2."), "2"),
    ("options", "en", n12("Answer: 1"), "1"),
    ("options", "en", n12("The first."), "1"),
    ("options", "en", n12("1 or 2"), None),
    ("options", "en", n12("Audio 1 has a lot of noise at 2 seconds.", Q_NATURAL_12), None),
    ("options", "en", n12("Neither 1 nor 2 sounds natural."), None),
    ("options", "en", emo("Surprise."), "surprised"),
    ("options", "en", emo("The speaker sounds angry."), "angry"),
    ("options", "en", emo("Happiness."), "happy"),
    ("options", "en", emo("The emotion is fear."), "fearful"),
    ("options", "en", emo("She sounds disgusted."), "disgust"),
    ("options", "en", emo("Calm, almost relaxed."), "calm"),
    ("options", "en", emo("Neutral tone."), "neutral"),
    ("options", "en", emo("I hear sadness in the voice."), "sad"),
    ("options", "en", emo("angry or sad"), None),
    ("options", "en", emo("The speaker is not happy."), None),
    ("options", "en", emo("Emotion"), None),
    ("options", "en", emo("Which emotion does the speaker express?"), None),
    ("options", "en", emo("Hard to say, maybe happy, maybe surprised."), None),
    ("options", "en", lang("This is Mandarin."), "Mandarin Chinese"),
    ("options", "en", lang("The speaker is speaking French."), "French"),
    ("options", "en", lang("Chinese."), "Mandarin Chinese"),
    ("options", "en", lang("It's German."), "German"),
    ("options", "en", lang("Sounds like Brazilian Portuguese."), "Portuguese"),
    ("options", "en", lang("Either Spanish or Portuguese."), None),
    ("options", "en", lang("Language"), None),
    ("options", "en", lang("It is not English."), None),
    # --------------------------------------------------------------------------------------------- options, es
    ("options", "es", ab("Respuesta: B"), "B"),
    ("options", "es", ab("La segunda."), "B"),
    ("options", "es", ab("El primero."), "A"),
    ("options", "es", ab("Elijo el audio 2."), "B"),
    ("options", "es", ab("La opción A es mejor."), "A"),
    ("options", "es", ab("Me quedo con la B."), "B"),
    ("options", "es", ab("El clip B tiene menos ruido de fondo.", Q_CLEAN), "B"),
    ("options", "es", ab("La segunda grabación suena más natural.", Q_NATURAL), "B"),
    ("options", "es", ab("Prefiero la primera."), "A"),
    ("options", "es", ab("A o B"), None),
    ("options", "es", ab("No sé cuál elegir."), None),
    ("options", "es", ab("Ambos suenan igual."), None),
    ("options", "es", ab("El clip A tiene más ruido que el clip B.", Q_CLEAN), None),
    ("options", "es", n12("La respuesta es 2."), "2"),
    ("options", "es", n12("El primero suena más natural.", Q_NATURAL_12), "1"),
    ("options", "es", lang("Es español."), "Spanish"),
    ("options", "es", emo("Sorpresa."), "surprised"),
    ("options", "es", emo("El hablante suena enojado."), "angry"),
    ("options", "es", emo("Tristeza."), "sad"),
    ("options", "es", lang("Habla en chino mandarín."), "Mandarin Chinese"),
    ("options", "es", lang("Alemán."), "German"),
    ("options", "es", emo("Feliz o triste, no estoy seguro."), None),
    ("options", "es", lang("No es inglés."), None),
    # --------------------------------------------------------------------------------------------- options, zh
    ("options", "zh", ab("答案是A"), "A"),
    ("options", "zh", ab("第二个。"), "B"),
    ("options", "zh", ab("我选B。"), "B"),
    ("options", "zh", ab("第一段音频更好。"), "A"),
    ("options", "zh", ab("音频2更干净。", Q_CLEAN), "B"),
    ("options", "zh", ab("选项A"), "A"),
    ("options", "zh", ab("B更好"), "B"),
    ("options", "zh", ab("第二段录音听起来更自然。", Q_NATURAL), "B"),
    ("options", "zh", ab("A或B"), None),
    ("options", "zh", ab("两个听起来一样。"), None),
    ("options", "zh", ab("我无法判断。"), None),
    ("options", "zh", ab("A和B都不好。"), None),
    ("options", "zh", n12("答案：2"), "2"),
    ("options", "zh", n12("第一个更自然。", Q_NATURAL_12), "1"),
    ("options", "zh", emo("答案是惊讶。"), "surprised"),
    ("options", "zh", emo("说话人听起来很生气。"), "angry"),
    ("options", "zh", lang("这是普通话。"), "Mandarin Chinese"),
    ("options", "zh", lang("中文"), "Mandarin Chinese"),
    ("options", "zh", lang("法语。"), "French"),
    ("options", "zh", emo("悲伤"), "sad"),
    ("options", "zh", lang("不是英语。"), None),
    ("options", "zh", emo("可能是开心，也可能是难过。"), None),
    # --------------------------------------------------------------------------------------------- verdict, en
    ("verdict", "en", "Yes", "Yes"),
    ("verdict", "en", "No, there is no difference.", "No"),
    ("verdict", "en", "Yes, both refer to the same city.", "Yes"),
    ("verdict", "en", "No. The prediction names a different country.", "No"),
    ("verdict", "en", "The answers are equivalent. Yes.", "Yes"),
    ("verdict", "en", "Verdict: No", "No"),
    ("verdict", "en", "They pick out the same entity, so yes.", "Yes"),
    ("verdict", "en", "No, a hare is not a rabbit.", "No"),
    ("verdict", "en", "YES", "Yes"),
    ("verdict", "en", "Answer: yes", "Yes"),
    ("verdict", "en", "Nope.", "No"),
    ("verdict", "en", "Correct.", "Yes"),
    ("verdict", "en", "Incorrect.", "No"),
    ("verdict", "en", "No - wait, Yes", None),
    ("verdict", "en", "Yes or No", None),
    ("verdict", "en", "", None),
    ("verdict", "en", "Maybe", None),
    ("verdict", "en", "Does the predicted answer pick out exactly the same entity or concept as the ground-truth "
                      "answer?", None),
    ("verdict", "en", "Answer with exactly one of: Yes, No.", None),
    ("verdict", "en", "Audio", None),
    ("verdict", "en", "asdf ghjk", None),
    ("verdict", "en", "I cannot determine this.", None),
    ("verdict", "en", "Yes. No.", None),
    # --------------------------------------------------------------------------------------------- verdict, es
    ("verdict", "es", "Sí", "Yes"),
    ("verdict", "es", "No", "No"),
    ("verdict", "es", "Sí, ambos nombran la misma ciudad.", "Yes"),
    ("verdict", "es", "No, son animales distintos.", "No"),
    ("verdict", "es", "Respuesta: sí", "Yes"),
    ("verdict", "es", "No, la predicción se refiere a otro país.", "No"),
    ("verdict", "es", "Son equivalentes, así que sí.", "Yes"),
    ("verdict", "es", "Sí o no", None),
    ("verdict", "es", "No estoy seguro.", None),
    ("verdict", "es", "Tal vez.", None),
    # --------------------------------------------------------------------------------------------- verdict, zh
    ("verdict", "zh", "是", "Yes"),
    ("verdict", "zh", "否", "No"),
    ("verdict", "zh", "是的，两者指的是同一个城市。", "Yes"),
    ("verdict", "zh", "不是，预测的是另一种动物。", "No"),
    ("verdict", "zh", "答案：是", "Yes"),
    ("verdict", "zh", "不一样。", "No"),
    ("verdict", "zh", "相同。", "Yes"),
    ("verdict", "zh", "是或否", None),
    ("verdict", "zh", "不确定。", None),
    ("verdict", "zh", "也许吧。", None),
    # -------------------------------------------------------------------------------------------------- em
    ("em", "en", ("ＪＡＰＡＮＥＳＥ", "Japanese"), True),
    ("em", "en", ("İstanbul", "Istanbul"), True),
    ("em", "en", ("İstanbul", "istanbul"), True),
    ("em", "en", ("1,000", "1000"), True),
    ("em", "en", ("The Eiffel Tower", "eiffel tower"), True),
    ("em", "en", ("twenty-one", "21"), True),
    ("em", "en", ("Straße", "STRASSE"), True),
    ("em", "en", ("1,000,000", "1000000"), True),
    ("em", "en", ("Ｔｏｋｙｏ", "Tokyo"), True),
    ("em", "en", ("1,000", "100"), False),
    ("em", "en", ("Austria", "Australia"), False),
    ("em", "en", ("", "Japanese"), False),
    ("em", "en", ("Japanese", "Chinese"), False),
    ("em", "en", ("1.5", "15"), False),
    ("em", "en", ("10,00", "1000"), False),
    ("em", "en", ("Audio", "Japanese"), False),
    ("em", "es", ("Japonés", "japonés"), True),
    ("em", "es", ("MÉXICO", "México"), True),
    ("em", "es", ("Mexico", "México"), True),
    ("em", "es", ("dos", "2"), True),
    ("em", "es", ("Perú", "Paraguay"), False),
    ("em", "es", ("", "México"), False),
    ("em", "zh", ("东京", "东京"), True),
    ("em", "zh", ("１０００", "1000"), True),
    ("em", "zh", ("东京。", "东京"), True),
    ("em", "zh", ("北京", "北京市"), False),
    ("em", "zh", ("上海", "北京"), False),
    ("em", "zh", ("", "北京"), False),
]

# Written after the readers were changed and labelled before being run; never used to tune them.
HELD_OUT: list[tuple] = [
    ("sync", "en", "The thud lands a good two seconds after the ball hits - definitely lagging.",
     desync("delay", 2.0)),
    ("sync", "en", "Audio and video are in lockstep.", SYNCED),
    ("sync", "en", "They aren't simultaneous; the sound comes first by roughly 1 second.", desync("early", -1.0)),
    ("sync", "en", "hmm audio audio audio", NO_SYNC),
    ("sync", "en", "Please answer whether the audio is synchronized.", NO_SYNC),
    ("sync", "es", "El audio llega unos 2 segundos tarde.", desync("delay", 2.0)),
    ("sync", "es", "Todo está perfectamente sincronizado.", SYNCED),
    ("sync", "zh", "声音比画面早了大约两秒。", desync("early", -2.0)),
    ("sync", "zh", "音频和视频完全同步。", SYNCED),
    ("sync", "zh", "我不确定。", NO_SYNC),
    ("existence", "en", "A faint hum of traffic and a dog barking far away.", state("audio_described")),
    ("existence", "en", "Completely silent, nothing audible.", state("muted")),
    ("existence", "en", "Two kids are playing soccer in a park.", state("visual_only")),
    ("existence", "en", "Sound sound sound", state(None)),
    ("existence", "en", "The mitochondria is the powerhouse of the cell.", state(None)),
    ("existence", "es", "Se escucha a una mujer cantando.", state("audio_described")),
    ("existence", "es", "No hay ningún sonido.", state("muted")),
    ("existence", "zh", "听到有人在敲门。", state("audio_described")),
    ("existence", "zh", "视频是静音的。", state("muted")),
    ("existence", "zh", "今天天气很好。", state(None)),
    ("consistency", "en", "The meowing I hear doesn't belong with the dog shown.", match("mismatch")),
    ("consistency", "en", "The crowd noise suits the stadium scene.", match("match")),
    ("consistency", "en", "A chef flips a pancake in a pan.", match("none")),
    ("consistency", "en", "Describe what you see and hear.", match(None)),
    ("consistency", "es", "El sonido no coincide con la imagen.", match("mismatch")),
    ("consistency", "es", "El audio encaja perfectamente con la escena.", match("match")),
    ("consistency", "zh", "声音与画面不一致。", match("mismatch")),
    ("consistency", "zh", "声音和画面很匹配。", match("match")),
    ("options", "en", ab("I'd go with the second clip."), "B"),
    ("options", "en", ab("Recording A sounds cleaner.", Q_CLEAN), "A"),
    ("options", "en", ab("Neither one stands out; they're equal."), None),
    ("options", "en", ab("Clip B has more background noise.", Q_CLEAN), None),
    ("options", "en", n12("Number 2."), "2"),
    ("options", "en", n12("At 1 second both sound fine."), None),
    ("options", "en", emo("Fearful."), "fearful"),
    ("options", "en", emo("The tone is joyful."), "happy"),
    ("options", "en", emo("Could be sad or calm."), None),
    ("options", "en", lang("Spoken language: Korean."), "Korean"),
    ("options", "en", lang("Definitely Japanese, not Chinese."), "Japanese"),
    ("options", "es", ab("Me quedo con el segundo."), "B"),
    ("options", "es", ab("Ninguno de los dos."), None),
    ("options", "es", emo("Parece asustado."), "fearful"),
    ("options", "es", lang("Es francés."), "French"),
    ("options", "zh", ab("选第一个。"), "A"),
    ("options", "zh", ab("两个都差不多。"), None),
    ("options", "zh", emo("听起来很开心。"), "happy"),
    ("options", "zh", lang("说的是日语。"), "Japanese"),
    ("options", "zh", lang("我不知道是什么语言。"), None),
    ("verdict", "en", "Yes - both name the same bird.", "Yes"),
    ("verdict", "en", "No; the prediction says Paris, the ground truth says Rome.", "No"),
    ("verdict", "en", "Yes and no, it depends.", None),
    ("verdict", "en", "The prediction refers to a different person.", "No"),
    ("verdict", "es", "Sí, es lo mismo.", "Yes"),
    ("verdict", "es", "No, no es el mismo animal.", "No"),
    ("verdict", "zh", "不是同一个人。", "No"),
    ("verdict", "zh", "是，两者一致。", "Yes"),
    ("verdict", "zh", "可能吧。", None),
    ("em", "en", ("ＴＨＲＥＥ", "3"), True),
    ("em", "en", ("2,500", "2500"), True),
    ("em", "en", ("Zürich", "zurich"), True),
    ("em", "es", ("Brasil", "Brazil"), False),
    ("em", "en", ("Kyōto", "Kyoto"), True),
    ("em", "es", ("25", "2,5"), False),
    ("em", "zh", ("サッカー", "サッカー"), True),
    ("em", "en", ("ＮＯ", "Yes"), False),
]

CASES = [(*case, "dev") for case in DEV] + [(*case, "held-out") for case in HELD_OUT]
