"""A second outside set of labelled replies for every rule-based reader (batch ``outside-2``).

Written blind, after the readers were changed: by someone who had read neither the readers' rules nor the earlier
outside set (``reader_outside.py``), only the case format and labelling contract of ``reader_phrasings.py``. Labels
were set before the set was first run. The set is used only to measure the readers on new phrasings, never to tune
them: a miss here is reported, not fixed by editing the readers against these cases.

Same format as ``reader_phrasings.py``: ``(reader, language, input, expected, "outside-2")``. Labelling principle:
never read doubt as an answer. A reply with an unambiguous final commitment gets that reading (also after a
self-correction, or when it rejects the label it was given: "the label says X but I hear Y" reads Y); a reversal
without a final explicit answer, a negation only ("not A"), a hedge between options, a tie, noise, an empty reply, the
question echoed back or a refusal has no reading. A clear reply in other words is read as a careful human reads it.
Replies are in English, Spanish, Chinese, German and French, phrased the way chat models answer: reasoning then an
answer, markdown, lists, JSON / ``[[B]]`` / ``\\boxed{}`` / XML tags, politeness, partial sentences and typos.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reader_phrasings import (  # noqa: E402
    NO_SYNC,
    Q_CLEAN,
    Q_LANGUAGE,
    Q_NATURAL,
    Q_NATURAL_12,
    Q_PREFER,
    SYNCED,
    ab,
    desync,
    emo,
    lang,
    match,
    n12,
    state,
)

Q_SAME = "Do the two answers name the same thing?"

OUTSIDE_2: list[tuple] = [
    # ------------------------------------------------------------------------------------------------ sync, en
    # Verbose reasoning then a verdict, markdown, lists, JSON; offsets in s / ms / words; early offsets negative.
    ("sync", "en", "**Answer:** Not synchronized.\n\nThe impact sound arrives roughly 1.5 seconds after the visible "
                   "collision, so the audio is delayed.", desync("delay", 1.5)),
    ("sync", "en", "Looking carefully at the moment the hammer strikes the nail, the sound is heard at exactly the "
                   "same instant. So: synchronized.", SYNCED),
    ("sync", "en", "The audio is ahead of the video by around 0.8 s — you hear the crash before the car actually "
                   "hits the wall.", desync("early", -0.8)),
    ("sync", "en", "Not synchronized — the audio is delayed by approximately 3 seconds.", desync("delay", 3.0)),
    ("sync", "en", "At first I thought the audio lagged, but after re-watching, the bang lines up with the door "
                   "slamming. Final answer: synchronized.", SYNCED),
    ("sync", "en", "It's out of sync.", desync("none")),
    ("sync", "en", "The sound precedes the visual event; audio early by ~2s.", desync("early", -2.0)),
    ("sync", "en", "The audio trails the picture by half a second.", desync("delay", 0.5)),
    ("sync", "en", "Yep, perfectly in sync 👍", SYNCED),
    ("sync", "en", "Not in sync. The audio comes in late, I'd estimate by 2 seconds or so.", desync("delay", 2.0)),
    ("sync", "en", "- Synchronized: no\n- Direction: early\n- Offset: about 1 second", desync("early", -1.0)),
    ("sync", "en", "The splash is heard before the diver enters the water.", desync("early")),
    ("sync", "en", "The visuals lag behind the sound by about 1 second.", desync("early", -1.0)),
    ("sync", "en", "There is a mismatch in timing between the audio and the video, with the audio arriving about "
                   "2.5 seconds too late.", desync("delay", 2.5)),
    ("sync", "en", "syncronized, no delay", SYNCED),
    ("sync", "en", '{"synchronized": false, "direction": "delayed", "offset_seconds": 1.2}', desync("delay", 1.2)),
    ("sync", "en", "**Not synchronized.** The audio is early by approximately 300 ms.", desync("early", -0.3)),
    # no reading: hedges, a reversal without a final answer, an echo, a refusal, noise
    ("sync", "en", "hmm, the sound seems off but I really can't tell whether it's early or late or even off at all.",
     NO_SYNC),
    ("sync", "en", "Synchronized? Not synchronized? Hard to say from this clip.", NO_SYNC),
    ("sync", "en", "I'm unable to play media files, so I can't determine whether the audio is synchronized.",
     NO_SYNC),
    ("sync", "en", "Is the sound of the main event synchronized with what you see?", NO_SYNC),
    ("sync", "en", "...", NO_SYNC),
    ("sync", "en", "The audio seems delayed... actually no, looking again I'm not sure.", NO_SYNC),
    # ------------------------------------------------------------------------------------------- sync, es/zh/de/fr
    ("sync", "es", "No, el audio no está sincronizado: se oye el golpe aproximadamente un segundo después de verlo.",
     desync("delay", 1.0)),
    ("sync", "es", "Sí, el sonido y la imagen van perfectamente sincronizados.", SYNCED),
    ("sync", "es", "El audio va adelantado unos 0,5 segundos respecto al vídeo.", desync("early", -0.5)),
    ("sync", "es", "No sabría decir si está sincronizado o no.", NO_SYNC),
    ("sync", "zh", "不同步，音频大约延迟了3秒。", desync("delay", 3.0)),
    ("sync", "zh", "声音和画面完全对得上，是同步的。", SYNCED),
    ("sync", "zh", "音频比画面提前约1秒。", desync("early", -1.0)),
    ("sync", "zh", "很难判断。", NO_SYNC),
    ("sync", "de", "Nicht synchron – der Ton kommt etwa 2 Sekunden zu spät.", desync("delay", 2.0)),
    ("sync", "de", "Ja, Bild und Ton sind synchron.", SYNCED),
    ("sync", "de", "Der Ton ist dem Bild um ca. 1,5 Sekunden voraus.", desync("early", -1.5)),
    ("sync", "de", "Das kann ich leider nicht beurteilen.", NO_SYNC),
    ("sync", "fr", "Non synchronisé : le son arrive avec environ 2 secondes de retard.", desync("delay", 2.0)),
    ("sync", "fr", "Oui, le son est parfaitement synchronisé avec l'image.", SYNCED),
    ("sync", "fr", "Le son est en avance d'environ une seconde sur l'image.", desync("early", -1.0)),
    ("sync", "fr", "Je ne peux pas écouter l'audio de cette vidéo.", NO_SYNC),
    # ------------------------------------------------------------------------------------------- existence, en
    # Sounds described (also "silent except ..."), silence stated, only the picture described, or no reading.
    ("existence", "en", "The clip has no audible sound at all — the audio track appears to be muted.",
     state("muted")),
    ("existence", "en", "In the audio, I can hear rain pattering on a window and distant thunder.",
     state("audio_described")),
    ("existence", "en", "**Audio description:**\n- A man speaking in a calm voice\n- Keyboard typing in the "
                        "background", state("audio_described")),
    ("existence", "en", "The video shows a cat jumping onto a kitchen counter and knocking over a cup.",
     state("visual_only")),
    ("existence", "en", "There's no sound in this video.", state("muted")),
    ("existence", "en", "It's silent except for some faint static.", state("audio_described")),
    ("existence", "en", "A woman laughing, followed by a door creaking open.", state("audio_described")),
    ("existence", "en", "Nothing – the soundtrack is completely blank.", state("muted")),
    ("existence", "en", "Upbeat electronic music plays throughout, with no speech.", state("audio_described")),
    ("existence", "en", "The scene is a busy street market with vendors and colorful stalls.", state("visual_only")),
    ("existence", "en", "I'm sorry, I can only see the frames and can't access the audio.", state(None)),
    ("existence", "en", "What do you hear in the video?", state(None)),
    ("existence", "en", "### ### ###", state(None)),
    ("existence", "en", "Sure! Here's a description of the audio:", state(None)),
    # -------------------------------------------------------------------------------------- existence, es/zh/de/fr
    ("existence", "es", "Se oye el sonido de las olas rompiendo en la orilla.", state("audio_described")),
    ("existence", "es", "El vídeo está completamente mudo.", state("muted")),
    ("existence", "es", "Una niña juega con un perro en el jardín.", state("visual_only")),
    ("existence", "zh", "能听到汽车鸣笛和人群的嘈杂声。", state("audio_described")),
    ("existence", "zh", "这段视频没有任何声音。", state("muted")),
    ("existence", "zh", "画面中一位老人在公园里打太极拳。", state("visual_only")),
    ("existence", "de", "Man hört Vogelgezwitscher und einen plätschernden Bach.", state("audio_described")),
    ("existence", "de", "Das Video hat keinen Ton.", state("muted")),
    ("existence", "de", "Ich weiß es nicht.", state(None)),
    ("existence", "fr", "On entend une guitare acoustique et quelqu'un qui chante.", state("audio_described")),
    ("existence", "fr", "La vidéo est totalement silencieuse.", state("muted")),
    ("existence", "fr", "Un homme fait du vélo sur une route de montagne.", state("visual_only")),
    # ----------------------------------------------------------------------------------------- consistency, en
    # match / mismatch (also after a self-correction), "none" when only the picture is described or nothing is
    # heard, no reading for hedges, echoes and refusals.
    ("consistency", "en", "Yes — the sound of waves crashing matches the ocean footage.", match("match")),
    ("consistency", "en", "The audio doesn't match: I see a piano being played but I hear a dog barking.",
     match("mismatch")),
    ("consistency", "en", "**Consistent.** The engine roar corresponds to the race car on screen.", match("match")),
    ("consistency", "en", "The soundtrack seems unrelated to the video — birdsong over a scene of a factory floor.",
     match("mismatch")),
    ("consistency", "en", "The video shows two people playing tennis on a clay court.", match("none")),
    ("consistency", "en", "I see a baby laughing, and the laughter I hear fits perfectly.", match("match")),
    ("consistency", "en", "The audio is out of place: you hear church bells, but the scene is an underwater reef.",
     match("mismatch")),
    ("consistency", "en", "Initially I thought the music didn't fit, but the drummer's hits line up with the drum "
                          "sounds, so they do match.", match("match")),
    ("consistency", "en", "Mismatch.", match("mismatch")),
    ("consistency", "en", "The footage shows a snowy mountain; there is no audio to compare.", match("none")),
    ("consistency", "en", "Hmm, the audio might match, or it might be from a different clip; hard to tell.",
     match(None)),
    ("consistency", "en", "Are the audio and video consistent?", match(None)),
    ("consistency", "en", "I cannot process audio input.", match(None)),
    # ------------------------------------------------------------------------------------ consistency, es/zh/de/fr
    ("consistency", "es", "El audio corresponde perfectamente con lo que se ve: aplausos en un teatro.",
     match("match")),
    ("consistency", "es", "No encaja: se oye tráfico pero la escena es un bosque tranquilo.", match("mismatch")),
    ("consistency", "es", "No lo sé.", match(None)),
    ("consistency", "zh", "画面中有人弹吉他，听到的也是吉他声，二者吻合。", match("match")),
    ("consistency", "zh", "声音和画面对不上：画面是下雪，声音却是海浪。", match("mismatch")),
    ("consistency", "zh", "一个小男孩在放风筝。", match("none")),
    ("consistency", "de", "Der Ton passt zum Bild: man sieht und hört einen Hund bellen.", match("match")),
    ("consistency", "de", "Ton und Bild passen nicht zusammen.", match("mismatch")),
    ("consistency", "de", "Schwer zu sagen.", match(None)),
    ("consistency", "fr", "Le son correspond bien à l'image.", match("match")),
    ("consistency", "fr", "L'audio ne correspond pas du tout à la scène : on entend une foule alors que la pièce "
                          "est vide.", match("mismatch")),
    ("consistency", "fr", "Je ne suis pas sûr.", match(None)),
    # --------------------------------------------------------------------------------------------- options, A/B en
    # Reasoning then an answer, formats (JSON, [[B]], \boxed{}, XML tags), self-corrections ending in an explicit
    # final answer, a label the reply rejects, comparisons in other words.
    ("options", "en", ab("Both clips are fairly clean, but clip A has a slight hum in the background while clip B is "
                         "crisp.\n\n**Answer: B**", Q_CLEAN), "B"),
    ("options", "en", ab("After comparing both, I'd say A. Wait — listening again, the hiss is actually in A. So my "
                         "final answer is B.", Q_CLEAN), "B"),
    ("options", "en", ab('{"answer": "A"}', Q_NATURAL), "A"),
    ("options", "en", ab("[[B]]", Q_PREFER), "B"),
    ("options", "en", ab("The final answer is $\\boxed{A}$.", Q_CLEAN), "A"),
    ("options", "en", ab("<answer>B</answer>", Q_NATURAL), "B"),
    ("options", "en", ab("Clip B is not as clean as clip A.", Q_CLEAN), "A"),
    ("options", "en", ab("Description B says tense and angry, but the person is smiling and relaxed, so A is more "
                         "faithful.", Q_PREFER), "A"),
    ("options", "en", ab("I initially leaned toward B, but on reflection A is the better choice.\n\nFinal answer: A",
                         Q_PREFER), "A"),
    ("options", "en", ab("The prompt labels the first recording as A, but that's the noisy one to my ears — the "
                         "second recording is cleaner, so B.", Q_CLEAN), "B"),
    ("options", "en", ab("Sure! Based on what I hear, the answer is **A**.", Q_NATURAL), "A"),
    ("options", "en", ab("A.\n\nExplanation: clip B has audible clipping and a robotic timbre.", Q_NATURAL), "A"),
    ("options", "en", ab("the second", Q_NATURAL), "B"),
    # no reading: a negation only, ties, hedges, a reversal without a final answer, echo, refusal, empty
    ("options", "en", ab("Not A.", Q_CLEAN), None),
    ("options", "en", ab("I think both have equal quality — it's a tie.", Q_NATURAL), None),
    ("options", "en", ab("Confidence — A: 50%, B: 50%.", Q_NATURAL), None),
    ("options", "en", ab(Q_NATURAL, Q_NATURAL), None),
    ("options", "en", ab("I'm sorry, but I can't listen to audio files.", Q_CLEAN), None),
    ("options", "en", ab("A is cleaner? No, B is cleaner? Honestly I can't tell.", Q_CLEAN), None),
    ("options", "en", ab("A... or maybe B."), None),
    # --------------------------------------------------------------------------------------------- options, 1/2 en
    ("options", "en", n12("**2**", Q_NATURAL_12), "2"),
    ("options", "en", n12("Audio 2 sounds more robotic, so audio 1.", Q_NATURAL_12), "1"),
    ("options", "en", n12("The answer is 2. Actually no, it's 1.", Q_NATURAL_12), "1"),
    ("options", "en", n12("1 and 2 are equally natural.", Q_NATURAL_12), None),
    # ------------------------------------------------------------------------------------------ options, emotion en
    ("options", "en", emo("The speaker's voice is trembling and rising in pitch, which suggests fear.\n\n"
                          "**Answer:** fearful"), "fearful"),
    ("options", "en", emo("The label says 'happy', but what I hear is a flat, monotone delivery — neutral."),
     "neutral"),
    ("options", "en", emo("She sounds furious."), "angry"),
    ("options", "en", emo("I first thought angry, but the laughter at the end makes it clear: happy."), "happy"),
    ("options", "en", emo('{"emotion": "calm"}'), "calm"),
    ("options", "en", emo("<emotion>sad</emotion>"), "sad"),
    ("options", "en", emo("Sad? Angry? It's hard to tell from such a short clip."), None),
    ("options", "en", emo("happy and surprised"), None),
    ("options", "en", emo("Not angry."), None),
    # ----------------------------------------------------------------------------------------- options, language en
    # Language codes ("it", "ko", "tr", "nl-BE") and names, a rejected label, hedges.
    ("options", "en", lang("Language: it"), "Italian"),
    ("options", "en", lang('{"language": "ko"}'), "Korean"),
    ("options", "en", lang("nl-BE"), "Dutch"),
    ("options", "en", lang("Detected language code: tr"), "Turkish"),
    ("options", "en", lang("Sounds like Cantonese, which isn't in the list; the closest option is Mandarin Chinese."),
     "Mandarin Chinese"),
    ("options", "en", lang("The language is definitely not Russian — it's Polish."), "Polish"),
    ("options", "en", lang("The label says English but I clearly hear Hindi."), "Hindi"),
    ("options", "en", lang("Either Swedish or maybe Norwegian, I'm not sure."), None),
    ("options", "en", lang("Italian or Spanish."), None),
    ("options", "en", lang(Q_LANGUAGE), None),
    # ------------------------------------------------------------------------------------------------ options, es
    ("options", "es", ab("Después de escuchar ambos clips, el B tiene menos ruido de fondo. Respuesta: B", Q_CLEAN),
     "B"),
    ("options", "es", ab("Ninguno es mejor, son iguales.", Q_NATURAL), None),
    ("options", "es", ab("Primero pensé que era A, pero en realidad es B.", Q_NATURAL), "B"),
    ("options", "es", n12("El audio 1 suena más natural.", Q_NATURAL_12), "1"),
    ("options", "es", emo("La persona suena muy tranquila."), "calm"),
    ("options", "es", emo("Parece asco."), "disgust"),
    ("options", "es", lang("Habla italiano."), "Italian"),
    ("options", "es", lang("Podría ser ruso o polaco."), None),
    # ------------------------------------------------------------------------------------------------ options, zh
    ("options", "zh", ab("两段音频都有一些噪音，但B的背景噪音更少。\n\n答案：B", Q_CLEAN), "B"),
    ("options", "zh", ab("最终答案：\\boxed{A}", Q_NATURAL), "A"),
    ("options", "zh", ab("我一开始选A，后来仔细听了一下，还是B更自然。最终答案：B", Q_NATURAL), "B"),
    ("options", "zh", ab("A和B一样好，无法区分。", Q_NATURAL), None),
    ("options", "zh", n12("音频1和音频2都不自然。", Q_NATURAL_12), None),
    ("options", "zh", emo("说话人的声音在颤抖，听起来很害怕。"), "fearful"),
    ("options", "zh", lang("说话的人讲的是韩语。"), "Korean"),
    ("options", "zh", lang("语言代码：it"), "Italian"),
    # ------------------------------------------------------------------------------------------------ options, de
    ("options", "de", ab("Clip B klingt deutlich natürlicher.", Q_NATURAL), "B"),
    ("options", "de", ab("Antwort: A", Q_CLEAN), "A"),
    ("options", "de", ab("Beide Clips sind gleich gut, ich kann mich nicht entscheiden.", Q_CLEAN), None),
    ("options", "de", ab("Zuerst dachte ich A, aber nach nochmaligem Hören ist B sauberer. Endgültige Antwort: B",
                         Q_CLEAN), "B"),
    ("options", "de", n12("Das zweite Audio.", Q_NATURAL_12), "2"),
    ("options", "de", emo("Die Sprecherin klingt traurig."), "sad"),
    ("options", "de", emo("Wütend oder ängstlich, schwer zu sagen."), None),
    ("options", "de", lang("Es wird Niederländisch gesprochen."), "Dutch"),
    ("options", "de", lang("Schwedisch."), "Swedish"),
    # ------------------------------------------------------------------------------------------------ options, fr
    ("options", "fr", ab("Le clip A est plus propre, avec moins de bruit de fond.", Q_CLEAN), "A"),
    ("options", "fr", ab("Réponse : B", Q_NATURAL), "B"),
    ("options", "fr", ab("Les deux se valent.", Q_NATURAL), None),
    ("options", "fr", ab("Pas A.", Q_CLEAN), None),
    ("options", "fr", n12("Le premier audio semble plus naturel.", Q_NATURAL_12), "1"),
    ("options", "fr", emo("La personne semble surprise."), "surprised"),
    ("options", "fr", emo("L'étiquette dit « neutre », mais j'entends de la colère."), "angry"),
    ("options", "fr", lang("C'est de l'allemand."), "German"),
    ("options", "fr", lang("Je dirais espagnol, ou peut-être portugais."), None),
    # --------------------------------------------------------------------------------------------- verdict, en
    # "Do these two answers name the same thing?": reasoning then a verdict, JSON, [[Yes]], a "No" inside a Yes
    # sentence; no reading for reversals without a final verdict, hedges, echoes and refusals.
    ("verdict", "en", "**Yes** — both answers refer to the Eiffel Tower.", "Yes"),
    ("verdict", "en", 'No. "Lion" and "tiger" are different animals.', "No"),
    ("verdict", "en", 'The predicted answer "NYC" is an abbreviation of "New York City", so they name the same '
                      "place.\n\nVerdict: Yes", "Yes"),
    ("verdict", "en", "Let me think. The ground truth is 'dolphin' and the prediction is 'porpoise'. These are "
                      "different species. So the answer is no.", "No"),
    ("verdict", "en", '{"verdict": "No"}', "No"),
    ("verdict", "en", "[[Yes]]", "Yes"),
    ("verdict", "en", "Same thing.", "Yes"),
    ("verdict", "en", "Not the same.", "No"),
    ("verdict", "en", "Final answer: NO", "No"),
    ("verdict", "en", "At first glance they look different, but 'UK' and 'United Kingdom' are the same country, so: "
                      "Yes.", "Yes"),
    ("verdict", "en", "True", "Yes"),
    ("verdict", "en", "Yes, they're the same. No further explanation needed.", "Yes"),
    ("verdict", "en", "Yes... actually, no — wait, I'm not sure.", None),
    ("verdict", "en", "They are similar but I can't say for certain whether they are the same.", None),
    ("verdict", "en", "Hmm, it's hard to say without more context.", None),
    ("verdict", "en", "yes/no", None),
    ("verdict", "en", Q_SAME, None),
    # ---------------------------------------------------------------------------------------- verdict, es/zh/de/fr
    ("verdict", "es", "No, son personas distintas.", "No"),
    ("verdict", "es", "Sí, ambas respuestas se refieren al mismo río.", "Yes"),
    ("verdict", "es", "Depende del contexto.", None),
    ("verdict", "zh", "是的，它们指的是同一个人。", "Yes"),
    ("verdict", "zh", "否，两个答案指的是不同的国家。", "No"),
    ("verdict", "zh", "无法确定。", None),
    ("verdict", "de", "Ja, beide bezeichnen dieselbe Stadt.", "Yes"),
    ("verdict", "de", "Nein, das sind zwei verschiedene Tiere.", "No"),
    ("verdict", "de", "Vielleicht.", None),
    ("verdict", "fr", "Oui, les deux réponses désignent la même personne.", "Yes"),
    ("verdict", "fr", "Non, ce ne sont pas les mêmes.", "No"),
    ("verdict", "fr", "Je ne sais pas.", None),
    # -------------------------------------------------------------------------------------------------- em
    # (prediction, ground truth): True only for the same answer once normalised (number words, articles as whole
    # words, case, accents, punctuation, spaces); signs, units, fractions vs decimals and extra words differ.
    ("em", "en", ("three", "3"), True),
    ("em", "en", ("-3", "3"), False),
    ("em", "en", ("3 kg", "3"), False),
    ("em", "en", ("2/5", "0.4"), False),
    ("em", "en", ("the cat", "cat"), True),
    ("em", "en", ("A cat", "cat"), True),
    ("em", "en", ("Thebes", "Bes"), False),
    ("em", "en", ("New York City.", "new york city"), True),
    ("em", "en", ("  Mount   Everest ", "Mount Everest"), True),
    ("em", "en", ("1st", "first"), True),
    ("em", "en", ("3.0", "3"), True),
    ("em", "en", ("0.5", "1/2"), False),
    ("em", "en", ("−3", "-3"), True),
    ("em", "en", ("50%", "50"), False),
    ("em", "en", ("Paris, France", "Paris"), False),
    ("em", "en", ("Barack Obama", "Obama"), False),
    ("em", "es", ("tres", "3"), True),
    ("em", "es", ("el Amazonas", "Amazonas"), True),
    ("em", "es", ("veintiuno", "21"), True),
    ("em", "es", ("España", "Espana"), True),
    ("em", "es", ("cinco", "seis"), False),
    ("em", "zh", ("三", "3"), True),
    ("em", "zh", ("十二", "12"), True),
    ("em", "zh", ("长江", "黄河"), False),
    ("em", "de", ("drei", "3"), True),
    ("em", "de", ("die Donau", "Donau"), True),
    ("em", "de", ("zwölf", "12"), True),
    ("em", "de", ("Österreich", "Australien"), False),
    ("em", "fr", ("trois", "3"), True),
    ("em", "fr", ("la Seine", "Seine"), True),
    ("em", "fr", ("quatre-vingts", "80"), True),
    ("em", "fr", ("deux", "douze"), False),
]

CASES = [(*case, "outside-2") for case in OUTSIDE_2]
