"""Doubt is never read as an answer: corrections, first impressions, incompatible claims, incongruity, noise, and the
LLM extractor's replies (``data_builders.interventions.extract``).

A misreading becomes a false finding in the audit; a non-reading (every field None) is only coverage lost. So an
answer that commits to a final claim is read as that claim, and one torn between two claims is read as nothing.
"""

import pytest

from omniaudit.data_builders.interventions import extract_phrases as ex
from omniaudit.data_builders.interventions.extract import extract, extract_sync
from omniaudit.data_builders.interventions.extract_llm import (
    LLM_OPTIONS,
    OUT_OF_SYNC,
    llm_extract,
    llm_fields,
    read_extractor_reply,
)
from omniaudit.data_builders.interventions.extract_phrases import is_noise, unread

SYNCED = {"synced": True, "direction": "none", "offset_s": 0.0}
NO_FIELDS = {"sync": {"synced": None, "direction": None, "offset_s": None}, "existence": {"audio_state": None},
             "consistency": {"match": None}}


def desync(direction: str, offset: float | None = None) -> dict:
    return {"synced": False, "direction": direction, "offset_s": offset}


def read_as(dimension: str, answer: str, expected: dict) -> None:
    got = extract(dimension, answer)
    assert set(got) == set(expected), (answer, got)
    for key, want in expected.items():
        if isinstance(want, float):
            assert got[key] == pytest.approx(want, abs=1e-6), (answer, got)
        else:
            assert got[key] == want, (answer, got)


@pytest.mark.parametrize(("answer", "expected"), [
    ("The sound isn't delayed; it's early by 0.5 seconds.", desync("early", -0.5)),
    ("Not delayed but early, by about 1 s.", desync("early", -1.0)),
    ("It isn't late, it's early by about 2 seconds.", desync("early", -2.0)),
    ("The audio doesn't lag; it comes early, roughly 1.5 s before the impact.", desync("early", -1.5)),
    ("Not early but late: the thud is 2 s behind the fall.", desync("delay", 2.0)),
    ("No, not delayed: the sound is ahead by 0.5 s.", desync("early", -0.5)),
    ("El sonido no está retrasado, está adelantado medio segundo.", desync("early", -0.5)),
    ("声音没有延迟，而是提前了0.5秒。", desync("early", -0.5)),
])
def test_ruling_one_direction_out_beside_the_other_claims_the_other(answer, expected):
    read_as("sync", answer, expected)


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("sync", "At first it seemed synchronized, but the sound is actually 2 seconds late.", desync("delay", 2.0)),
    ("sync", "Initially I thought it was in sync, but the audio lags by 1 s.", desync("delay", 1.0)),
    ("sync", "Initially the audio seemed in sync; in fact it trails the video by 1 second.", desync("delay", 1.0)),
    ("sync", "I first thought it was synchronized, but on closer listening the sound is delayed by about 2 seconds.",
     desync("delay", 2.0)),
    ("sync", "It looked aligned at first, but actually the audio is early by 1 s.", desync("early", -1.0)),
    ("sync", "At first glance it's in sync. On second listen, the thud arrives half a second late.",
     desync("delay", 0.5)),
    ("sync", "It sounded synchronized, but the audio actually lags by 2 seconds.", desync("delay", 2.0)),
    ("sync", "At first, it seemed synchronized, but the sound is 2 s late.", desync("delay", 2.0)),
    ("sync", "I thought the sound was late, but it is actually perfectly synchronized.", SYNCED),
    ("sync", "Al principio creí que estaba sincronizado, pero en realidad el sonido llega 2 segundos tarde.",
     desync("delay", 2.0)),
    ("sync", "一开始我以为是同步的，但其实声音晚了2秒。", desync("delay", 2.0)),
    ("existence", "At first I thought it was silent, but there's a faint hum.", {"audio_state": "audio_described"}),
    ("existence", "Initially it seemed silent, but on closer listening I hear a quiet hum.",
     {"audio_state": "audio_described"}),
    ("existence", "一开始我以为没有声音，但其实有风声。", {"audio_state": "audio_described"}),
    ("consistency", "At first the sounds seemed to fit, but the siren is out of place in a calm meadow.",
     {"match": "mismatch"}),
    ("consistency", "I thought it was a mismatch, but the thud actually fits the ball hitting the floor.",
     {"match": "match"}),
    ("consistency", "一开始我以为声音匹配，但其实声音来自另一个视频。", {"match": "mismatch"}),
])
def test_a_correction_after_a_first_impression_is_read(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("sync", "Perfectly synced... actually no, it lags by half a second.", desync("delay", 0.5)),
    ("sync", "Perfectly synced... actually no it lags by half a second.", desync("delay", 0.5)),
    ("sync", "Synchronized. Wait, no - the audio is delayed by 1 s.", desync("delay", 1.0)),
    ("sync", "The audio is early by 2 s. Correction: it's delayed by 2 s.", desync("delay", 2.0)),
    ("sync", "The sound is in sync. Scratch that, it's about 1 second late.", desync("delay", 1.0)),
    ("sync", "The audio is early by 1 s. Actually, it's in sync.", SYNCED),
    ("sync", "The audio is delayed by 2 s, actually more like 1 s late.", desync("delay", 1.0)),
    ("sync", "Es sincronizado. En realidad, no: el sonido llega con 1 segundo de retraso.", desync("delay", 1.0)),
    ("sync", "声音同步。其实不是，声音提前了半秒。", desync("early", -0.5)),
    ("existence", "I hear birds chirping. Actually, no, the video has no sound.", {"audio_state": "muted"}),
    ("existence", "The audio is silent. Wait, I hear footsteps.", {"audio_state": "audio_described"}),
    ("consistency", "The audio matches the video. Actually, no: the dog barking doesn't belong in an aquarium.",
     {"match": "mismatch"}),
])
def test_an_explicit_correction_is_read(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    # "actually" that corrects nothing, or a restatement with less detail: the whole answer is read
    ("sync", "The bang is audible before the hammer actually strikes.", desync("early")),
    ("sync", "The audio is delayed by 2 s. It actually lags quite a bit.", desync("delay", 2.0)),
    ("sync", "The audio is actually in sync with the video.", SYNCED),
    ("sync", "On closer listening, the audio is synchronized.", SYNCED),
])
def test_a_turn_word_that_changes_nothing_keeps_the_whole_reading(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    # a past impression whose contrast claims nothing stands; a seen voice or event is no heard one
    ("sync", "The sound seemed delayed, but only slightly.", desync("delay")),
    ("sync", "I figured out that the audio is delayed by 1 s.", desync("delay", 1.0)),
    ("sync", "The man and the dog wait. The audio is early.", desync("early")),
    ("existence", "The video is silent; it shows a woman speaking to the camera.", {"audio_state": "muted"}),
    ("existence", "The video is muted, so the man talking can't be heard.", {"audio_state": "muted"}),
    ("existence", "The video is silent, but soft music plays.", {"audio_state": "audio_described"}),
])
def test_what_only_looks_like_a_turn_or_a_conflict_is_read(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer"), [
    ("sync", "The audio is synchronized. The audio is delayed by 2 s."),
    ("existence", "It is silent at the start, then I hear a crash."),
    ("sync", "The audio is synchronized, but it is also delayed by 2 seconds."),
    ("sync", "The sound is in sync with the picture and it lags by 1 s."),
    ("sync", "The audio is out of sync. The audio is synchronized."),
    ("sync", "The audio is delayed, no, it's in sync."),
    ("existence", "The clip is silent. I can hear music playing."),
    ("existence", "There is no sound. I hear a dog barking."),
    ("existence", "No se oye nada. Oigo un perro ladrando."),
    ("existence", "视频没有声音。我听到狗叫声。"),
    ("consistency", "The audio fits the video, and the audio does not fit the video."),
    ("consistency", "The sound matches the scene. The sound is unrelated to the scene."),
])
def test_two_incompatible_claims_are_not_read(dimension, answer):
    assert extract(dimension, answer) == NO_FIELDS[dimension], answer


@pytest.mark.parametrize(("dimension", "answer"), [
    ("sync", "Initially I thought it was early."),
    ("sync", "I thought it was synchronized."),
    ("sync", "At first it seemed delayed, but then I'm not sure."),
    ("sync", "It's synchronized. Actually, no."),
    ("sync", "Synchronized. Actually, I'm not sure."),
    ("sync", "It's delayed by 2 s... actually, I can't tell."),
    ("sync", "At first, the sound was in sync, later it drifted."),
    ("existence", "It seemed silent at first."),
    ("existence", "At first I heard nothing, but then I'm not sure."),
    ("existence", "I hear music, actually I'm not sure there is any sound."),
])
def test_a_first_impression_or_a_retraction_with_no_final_claim_is_not_read(dimension, answer):
    assert extract(dimension, answer) == NO_FIELDS[dimension], answer


@pytest.mark.parametrize("answer", [
    "I hear birds chirping, which is odd for an indoor kitchen scene.",
    "The sound of waves is unusual for a desert scene.",
    "Church bells in an underwater scene seem out of place.",
    "I hear a lion roaring, which is strange given that the video shows a library.",
    "You wouldn't expect to hear traffic in the middle of a forest.",
    "The birdsong is not what you'd expect inside a submarine.",
    "A doorbell sound in a spaceship doesn't fit.",
    "It is weird to hear applause in an empty room.",
    "The sound of a crowd cheering is surprising for a quiet bedroom scene.",
    "Oigo pájaros cantando, lo cual es extraño para una cocina.",
    "Oigo pájaros, algo fuera de lugar en una cocina.",
    "我听到鸟叫声，这在室内厨房里很奇怪。",
    "鸟叫声和厨房画面格格不入。",
])
def test_an_incongruous_sound_is_a_mismatch(answer):
    assert extract("consistency", answer) == {"match": "mismatch"}, answer


@pytest.mark.parametrize("answer", [
    "Nothing odd here: the thud fits the ball.",
    "It's not unusual for a kitchen to have a humming fridge.",
    "Nothing strange here: the frying sound fits a kitchen.",
    "The hammering matches the carpenter, which is unsurprising.",
    "The thud fits the ball, but the birdsong is out of place in a kitchen.",  # a partial mismatch is a mismatch
])
def test_a_negated_incongruity_is_a_match_and_a_partial_one_a_mismatch(answer):
    want = "mismatch" if "out of place" in answer else "match"
    assert extract("consistency", answer) == {"match": want}, answer


NOISE = ["", "   ", "the the the the", "Yes yes yes yes", "No no no", "synchronized synchronized synchronized",
         "ĠĠĠĠ", "ĠĠĠĠ ĠĠĠĠ", "<unk><unk>", "<unk><unk><unk>", "<|endoftext|><|endoftext|>", "xq zzk pwt vbn",
         "aaaa", "\ufffd\ufffd abc"]


@pytest.mark.parametrize("dimension", ["sync", "existence", "consistency"])
@pytest.mark.parametrize("answer", NOISE)
def test_noise_is_no_answer_for_every_extractor(dimension, answer):
    assert is_noise(answer), answer
    assert extract(dimension, answer) == NO_FIELDS[dimension], answer
    assert read_extractor_reply(dimension, answer) is None


@pytest.mark.parametrize("answer", ["Yes.", "No, no.", "Silence.", "Audio", "I hear a thud.", "5", "同步", "B"])
def test_short_answers_are_not_noise(answer):
    assert not is_noise(answer)


# ------------------------------------------------------------------------------------------------ the LLM extractor
@pytest.mark.parametrize(("dimension", "reply", "label"), [
    ("consistency", '{"match": "mismatch"}', "mismatch"),
    ("consistency", '```json\n{"answer": "match"}\n```', "match"),
    ("consistency", "Label: mismatch", "mismatch"),
    ("consistency", "MATCH", "match"),
    ("sync", "Sure! The answer is: audio delayed.", "audio delayed"),
    ("sync", 'The answer is "audio early".', "audio early"),
    ("sync", "Reasoning: the model says the sound comes after the picture.\naudio delayed", "audio delayed"),
    ("sync", '{"synced": false, "direction": "early"}', "audio early"),
    ("sync", '{"synced": true}', "synchronized"),
    ("sync", "out of sync, direction unknown", OUT_OF_SYNC),
    ("sync", "The model says it's out of sync but gives no direction.", OUT_OF_SYNC),
    ("sync", "Not synchronized.", OUT_OF_SYNC),
    ("sync", "The model first said synchronized, then corrected itself. Answer: audio delayed", "audio delayed"),
    ("existence", "The answer describes the pictures only, so: visual_only", "visual_only"),
    ("existence", "**muted**", "muted"),
    ("existence", '{"audio_state": "visual_only"}', "visual_only"),
    ("existence", "Audio described.", "audio_described"),
    ("existence", "Final answer: muted", "muted"),
])
def test_chatty_and_json_extractor_replies_are_read(dimension, reply, label):
    assert read_extractor_reply(dimension, reply) == label


@pytest.mark.parametrize(("dimension", "reply"), [
    ("sync", "It is either audio delayed or audio early."),
    ("sync", 'Answer: "synchronized"\nAnswer: "audio delayed"'),
    ("sync", 'Answer with exactly one of: "synchronized", "audio delayed", "audio early", "unclear".'),
    ("existence", "muted or audio_described"),
    ("consistency", "It's not a match."),
    ("consistency", "match\nmismatch"),
    ("consistency", '{"match": "match"} Actually the answer is mismatch.'),
    ("consistency", "I cannot decide."),
    ("existence", "The answer describes visual content and the sound of rain."),  # a loose word is no option
])
def test_torn_or_empty_extractor_replies_are_not_read(dimension, reply):
    assert read_extractor_reply(dimension, reply) is None


def test_out_of_sync_without_direction_gives_the_fields_the_rules_give():
    """The extractor's "out of sync, direction unknown" is the rules' bare "not synchronized": synced False,
    direction none (a Shift answer the audit counts as flagged but with no direction), no offset."""
    assert OUT_OF_SYNC in LLM_OPTIONS["sync"] and LLM_OPTIONS["sync"][:2] == ["synchronized", "audio delayed"]
    rules = extract_sync("The audio is not synchronized with the video.")
    assert llm_fields("sync", OUT_OF_SYNC, "It is off by 2 s.") == rules == desync("none")
    assert llm_fields("sync", "unclear", "hmm") == {}


class _Judge:
    """A stand-in extractor: chatty replies in the order asked; records what it was asked."""

    def __init__(self, replies):
        self.replies, self.asked = list(replies), []

    def answer(self, items):
        self.asked.extend(items)
        return self.replies[:len(items)]


def test_llm_extract_sends_no_noise_and_reads_chatty_replies(monkeypatch):
    import omniaudit.runners as runners

    judge = _Judge(['{"match": "mismatch"}', "Sure! The answer is: audio delayed.", "hmm, muted or visual_only"])
    monkeypatch.setattr(runners, "make_judge", lambda spec, **_: judge)
    rows = [("a", "consistency", "I hear birds in a kitchen."), ("n", "sync", "the the the the"),
            ("b", "sync", "The thud comes about 2 seconds after the fall."), ("c", "existence", "Hmm."),
            ("z", "existence", "<unk><unk>")]
    got = llm_extract(rows, "fake")
    assert [i.id for i in judge.asked] == ["a", "b", "c"]  # the noise answers were not sent
    assert got == {"a": {"match": "mismatch"}, "n": {}, "b": desync("delay", 2.0), "c": {}, "z": {}}
    # the options are quoted in the prompt: one of them holds a comma
    assert f'"{OUT_OF_SYNC}"' in judge.asked[1].prompt and judge.asked[1].options == LLM_OPTIONS["sync"]


def test_the_answers_a_hybrid_reading_hands_to_the_extractor_are_the_unread_ones():
    assert unread(extract("sync", "Hard to say."))
    assert unread(extract("consistency", "The sound matches the scene. The sound is unrelated to the scene."))
    assert not unread(extract("sync", "Not delayed but early, by about 1 s."))
    assert not unread(extract("existence", "A man rides a bike down a hill."))  # visual_only is a reading
    assert ex.unread({"audio_state": None}) and not ex.unread({"match": "none"})


# ------------------------------------------------------------------------------------------------ negated claims
@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("sync", "It is not true that the sound and picture are in sync.", desync("none")),
    ("sync", "I don't think the sound is aligned with the picture.", desync("none")),
    ("sync", "It's not the case that the soundtrack is out of sync.", SYNCED),
    ("sync", "It's not true that the audio is synchronized; the thud trails by 1 s.", desync("delay", 1.0)),
    ("sync", "Es ist nicht so, dass Bild und Ton synchron sind.", desync("none")),
    ("sync", "No es cierto que el audio esté sincronizado.", desync("none")),
    ("consistency", "It's not the case that the music fits the scene.", {"match": "mismatch"}),
    ("consistency", "It is not true that the birdsong is out of place.", {"match": "match"}),
    ("consistency", "Ich glaube nicht, dass der Ton zum Bild passt.", {"match": "mismatch"}),
    ("consistency", "Je ne pense pas que le son corresponde à l'image.", {"match": "mismatch"}),
])
def test_a_negated_claim_claims_its_opposite(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer"), [
    ("sync", "It isn't the case that the audio lags."),  # not delayed: early or in sync, nobody says which
    ("sync", "Ce n'est pas vrai que le son est en avance."),
    ("existence", "It's not true that the clip is silent."),  # names no sound
])
def test_a_negated_direction_or_silence_is_not_read(dimension, answer):
    assert extract(dimension, answer) == NO_FIELDS[dimension], answer


# ------------------------------------------------------------------------------------------------ amounts
@pytest.mark.parametrize(("answer", "expected"), [
    ("The thud lands one and a half seconds after the ball.", desync("delay", 1.5)),
    ("The audio leads by two and a half seconds.", desync("early", -2.5)),
    ("It lags by a second and a half.", desync("delay", 1.5)),
    ("Der Knall kommt 2,5 Sekunden zu spät.", desync("delay", 2.5)),  # a decimal comma
    ("Le son est en avance de 1,5 seconde.", desync("early", -1.5)),
    ("Der Ton kommt eine halbe Sekunde zu spät.", desync("delay", 0.5)),
    ("Le bruit est en retard d'une demi-seconde.", desync("delay", 0.5)),
    ("The delay is 0.5 s.", desync("delay", 0.5)),
])
def test_a_number_with_a_half_or_a_decimal_comma_is_read_as_its_value(answer, expected):
    read_as("sync", answer, expected)


@pytest.mark.parametrize("answer", ["There's a 0 s offset.", "Offset: 0 ms.", "The delay is 0.0 s.",
                                    "Zero seconds of delay."])
def test_a_stated_zero_offset_is_synchrony(answer):
    read_as("sync", answer, SYNCED)


# ------------------------------------------------------------------------------------------------ doubt
@pytest.mark.parametrize("answer", [
    "声音不同步，我分不清是提前还是滞后。",
    "音画不同步，但听不出是延迟还是提前。",
    "Out of sync, though I can't say whether early or late.",
    "Versetzt, aber ob zu früh oder zu spät, kann ich nicht sagen.",
    "Décalé, mais je ne sais pas si le son est en avance ou en retard.",
])
def test_a_direction_named_only_inside_a_doubt_is_no_direction(answer):
    read_as("sync", answer, desync("none"))


@pytest.mark.parametrize(("answer", "expected"), [
    ("Nothing in the soundtrack seems odd.", "match"),
    ("Nothing about these sounds is unusual for a beach.", "match"),
    ("Birdsong in a submarine is strange.", "mismatch"),
])
def test_an_incongruity_said_of_the_sound_is_read_with_its_negation(answer, expected):
    assert extract("consistency", answer) == {"match": expected}, answer


@pytest.mark.parametrize("answer", [
    "Partially consistent, partially not.",
    "It fits in part, and in part it doesn't.",
    "The voices match the picture, but not the music.",
])
def test_a_split_consistency_verdict_is_not_read(answer):
    assert extract("consistency", answer) == NO_FIELDS["consistency"], answer


@pytest.mark.parametrize(("answer", "expected"), [
    ("In sync. Just kidding: the audio runs 1 s early.", desync("early", -1.0)),
    ("Early? Late? Final answer: the sound is late by 2 s.", desync("delay", 2.0)),
    ("In sync, no wait. Final answer: early.", desync("early")),
])
def test_a_joke_retracted_or_a_final_answer_is_read_as_the_final_claim(answer, expected):
    read_as("sync", answer, expected)


# ------------------------------------------------------------------------------------------------ German and French
@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("sync", "Synchronisiert.", SYNCED),
    ("sync", "Nein, Bild und Ton sind gegeneinander versetzt.", desync("none")),
    ("sync", "Der Ton hinkt dem Bild etwa 3 Sekunden hinterher.", desync("delay", 3.0)),
    ("sync", "Das Bild läuft dem Ton um eine Sekunde voraus.", desync("delay", 1.0)),  # the picture leads
    ("sync", "Es gibt keine Verzögerung, Ton und Bild sind gleichzeitig.", SYNCED),
    ("existence", "Im Video hört man Vögel zwitschern.", {"audio_state": "audio_described"}),
    ("existence", "Man hört überhaupt nichts.", {"audio_state": "muted"}),
    ("existence", "Das Video ist völlig stumm.", {"audio_state": "muted"}),
    ("existence", "Ein Junge wirft einen Ball.", {"audio_state": "visual_only"}),
    ("consistency", "Die Geräusche passen gut zur Szene.", {"match": "match"}),
    ("consistency", "Die Musik passt überhaupt nicht.", {"match": "mismatch"}),
    ("consistency", "Ich finde, dass die Musik nicht zur Szene passt.", {"match": "mismatch"}),  # verb last
    ("consistency", "Der Ton stammt aus einem anderen Video.", {"match": "mismatch"}),
])
def test_german_answers_are_read_through_their_gloss(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("sync", "Désynchronisé.", desync("none")),
    ("sync", "Oui, tout est synchronisé.", SYNCED),
    ("sync", "Non, le son arrive trop tard, environ 3 secondes après l'image.", desync("delay", 3.0)),
    ("sync", "L'image est en retard par rapport au son.", desync("early")),
    ("sync", "Il n'y a aucun décalage entre le son et l'image.", SYNCED),
    ("existence", "J'entends une voiture et de la musique.", {"audio_state": "audio_described"}),
    ("existence", "Il n'y a pas de son dans cette vidéo.", {"audio_state": "muted"}),
    ("existence", "On n'entend rien du tout.", {"audio_state": "muted"}),
    ("existence", "Une femme court sur la plage.", {"audio_state": "visual_only"}),
    ("consistency", "Les bruits correspondent bien à la scène.", {"match": "match"}),
    ("consistency", "La musique ne correspond pas du tout à l'image.", {"match": "mismatch"}),
    ("consistency", "Le son vient d'une autre vidéo.", {"match": "mismatch"}),
])
def test_french_answers_are_read_through_their_gloss(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer"), [
    ("sync", "Le son ne précède pas l'image."),  # a "ne ... pas" the lexicon cannot place
    ("consistency", "Le son ne précède pas l'image."),
    ("existence", "Je n'entends pas la musique."),
    ("existence", "Ich höre den Hund nicht."),  # a clause-final "nicht" negates its verb
    ("existence", "Ich höre keine Musik."),
    ("sync", "Ist der Ton synchron mit dem Bild?"),
    ("sync", "Le son est peut-être en retard, ou peut-être synchronisé."),
    ("consistency", "Je ne sais pas si le son correspond à la scène."),
    ("consistency", "Ich bin nicht sicher, ob der Ton zum Bild passt."),
])
def test_a_german_or_french_negation_or_doubt_the_gloss_cannot_place_is_not_read(dimension, answer):
    assert extract(dimension, answer) == NO_FIELDS[dimension], answer


def test_an_answer_in_a_language_without_a_gloss_is_not_read_by_the_english_rules(monkeypatch):
    """A language ``language()`` names but no gloss covers stays unread: raw, its cognates ("correspond",
    "synchronisé") would reach the English rules without their negation ("ne ... pas")."""
    from omniaudit.data_builders.interventions import extract_gloss

    answers = {"consistency": "La musique ne correspond pas à la scène.", "sync": "Le son est synchronisé.",
               "existence": "La vidéo n'a aucun son."}
    monkeypatch.setattr(extract_gloss, "_GLOSSES", {k: v for k, v in extract_gloss._GLOSSES.items() if k != "fr"})
    for dimension, answer in answers.items():
        assert extract_gloss.english(answer) == ""
        assert extract(dimension, answer) == NO_FIELDS[dimension], answer


@pytest.mark.parametrize(("answer", "language"), [("Asynchron.", "de"), ("Décalés.", "fr"),
                                                  ("Un homme coupe du pain.", "fr"), ("On n'entend rien.", "fr"),
                                                  ("In sync.", "en"), ("No delay.", "en"), ("Dog barking.", "en")])
def test_a_short_answer_is_glossed_in_the_language_of_its_words(answer, language):
    from omniaudit.data_builders.interventions.extract_gloss import _language

    assert _language(answer) == language


@pytest.mark.parametrize(("answer", "expected"), [
    # a noun after "between" (either one of the pair) is no subject
    ("There is a lag between the picture and the sound, with the sound coming in roughly 1 second late.",
     desync("delay", 1.0)),
    ("I notice a timing offset between the sound and the visuals, with the sound landing 0.5 s too early.",
     desync("early", -0.5)),
    # "with <noun> <participle>" is an absolute clause: its noun is the subject
    ("The clip is out of step, with the video trailing the audio by half a second.", desync("early", -0.5)),
    ("The picture and the soundtrack drift apart, with the soundtrack lagging by two seconds.", desync("delay", 2.0)),
    ("The video is off, with the audio running about 0.3 s ahead.", desync("early", -0.3)),
    # a plain object of "with" is still no subject
    ("The audio is out of sync with the video, coming in early.", desync("early")),
])
def test_a_noun_after_between_is_no_subject_but_one_leading_an_absolute_with_clause_is(answer, expected):
    read_as("sync", answer, expected)


@pytest.mark.parametrize(("answer", "expected"), [
    ("Absolutely nothing; the soundtrack is blank.", "muted"),
    ("The audio track is entirely empty.", "muted"),
    ("The sound is completely blank throughout.", "muted"),
    ("Nothing at all.", "muted"),
    ("Nothing.", "muted"),
    ("Nothing, apart from a low hum.", "audio_described"),  # an exception names a sound
    ("The audio is blank except for some faint traffic noise.", "audio_described"),
    ("Nothing special, just crickets chirping.", "audio_described"),  # "nothing special" is no silence claim
])
def test_a_blank_or_empty_soundtrack_or_nothing_heard_is_silence(answer, expected):
    read_as("existence", answer, {"audio_state": expected})


@pytest.mark.parametrize(("dimension", "answer"), [
    ("sync", "No sé si el sonido va adelantado o retrasado."),
    ("sync", "No podría decir si el audio coincide con la imagen."),
    ("sync", "Es difícil saber si está sincronizado."),
    ("sync", "Si el audio está retrasado, no lo noto."),  # "si" is "if", not "sí"
    ("sync", "The sound might be in sync, or it might lag a little."),
    ("sync", "It could be synchronized or slightly off."),
    ("sync", "Perhaps a bit early, perhaps a bit late."),
    ("sync", "It is either a little early or perfectly aligned."),
    ("consistency", "The barking could fit the dog, or it could come from another recording."),
    ("consistency", "Maybe the music belongs to the scene, maybe it was added later."),
    ("consistency", "The crowd noise may suit the stadium or may have been dubbed in; I can't tell."),
])
def test_possibilities_offered_as_alternatives_are_not_read(dimension, answer):
    assert extract(dimension, answer) == NO_FIELDS[dimension], answer


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("sync", "Sí, el audio está sincronizado.", SYNCED),
    ("sync", "Si, está sincronizado.", SYNCED),  # an unaccented "si" alone is still yes
    # a range is no alternative: the direction stands, and no one offset is stated (see test_a_range_...)
    ("sync", "It may be delayed by one or two seconds.", desync("delay")),
    ("sync", "Out of sync, though I can't say whether early or late.", desync("none")),
    ("existence", "Maybe birds, maybe crickets chirping in the background.", {"audio_state": "audio_described"}),
    ("existence", "I can hear either gulls or terns calling.", {"audio_state": "audio_described"}),
])
def test_alternatives_that_share_a_claim_or_name_no_claim_keep_the_reading(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("sync", '{"in_sync": false, "direction": "early", "offset_s": 0.8}', desync("early", -0.8)),
    ("sync", '```json\n{"synced": true, "direction": null, "offset": 0}\n```', SYNCED),
    ("sync", 'Here is my answer: {"synchronized": "no", "direction": "late", "offset_ms": 400}', desync("delay", 0.4)),
    ("sync", '{"synchronized": false, "direction": "video ahead", "offset_seconds": 0.5}', desync("delay", 0.5)),
    ("sync", '{"result": {"sync": false, "direction": "audio leads", "offset": "about 2 s"}}', desync("early", -2.0)),
    ("sync", '{"delay_ms": 250}', desync("delay", 0.25)),
    ("sync", '{"synchronized": false}', desync("none")),
    ("sync", "* Synced: No\n* Direction: late\n* Offset: 2 seconds", desync("delay", 2.0)),
    ("sync", "**Synchronized:** no\n**Direction:** the audio lags behind the picture\n**Offset:** ~0.5 s",
     desync("delay", 0.5)),
    ("sync", "Synced: no", desync("none")),
    ("sync", "Synced: No, the audio is early by 2 s.", desync("early", -2.0)),
    ("sync", "In sync: the thud lands with the ball.", SYNCED),  # a heading over a sentence is prose
    ("existence", '{"audio_state": "silent"}', {"audio_state": "muted"}),
    ("existence", '{"sound_present": false, "notes": "no sound at all"}', {"audio_state": "muted"}),
    ("existence", '{"has_audio": true, "audio": ["an engine revving", "wind"]}', {"audio_state": "audio_described"}),
    ("existence", "- Sound: none\n- Visual: a woman jogging along a beach", {"audio_state": "muted"}),
    ("existence", "**Audio description:**\n- rain on a tin roof\n- distant thunder",
     {"audio_state": "audio_described"}),
    ("consistency", '{"consistent": false}', {"match": "mismatch"}),
    ("consistency", '{"match": "yes", "reason": "the splash goes with the dive"}', {"match": "match"}),
    ("consistency", "Visual: a man chopping vegetables\nAudio: birdsong\nMatch: no", {"match": "mismatch"}),
    ("consistency", "- Consistent: no\n- Reason: waves crashing over a city street", {"match": "mismatch"}),
])
def test_a_structured_answer_is_read_field_by_field(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("dimension", "answer"), [
    ("sync", '{"synchronized": true, "direction": "early"}'),  # synchronized, yet a direction
    ("sync", '{"synced": true, "offset_ms": 500}'),  # synchronized, yet an offset
    ("sync", '{"synchronized": false, "offset_seconds": 0}'),  # out of sync, yet no offset
    ("sync", '{"in_sync": false, "direction": "early"}\nThe thud comes after the impact.'),  # prose says late
    ("sync", "Synchronized: no\nDirection: early\nThe sound comes after the impact."),
    ("sync", "Synchronized: No, it is perfectly in sync."),  # the flag against its own sentence
    ("sync", '{"synchronized": "true or false", "direction": "early | late"}'),  # the template echoed
    ("sync", "Synchronized: partially"),
    ("existence", '{"sound_present": false, "audio": "a dog barking"}'),
    ("existence", '{"audio_state": "visual_only"} I hear a dog.'),
    ("consistency", '{"consistent": true, "note": "the crowd noise is out of place in a library"}'),
    ("consistency", "Match: yes\nReason: birdsong in a kitchen is strange"),
    ("consistency", '{"match": "none"}'),
])
def test_a_structured_answer_that_contradicts_itself_or_cannot_be_read_is_not_read(dimension, answer):
    assert extract(dimension, answer) == NO_FIELDS[dimension], answer


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("existence", "The setting is a snowy mountain pass with pine trees.", {"audio_state": "visual_only"}),
    ("existence", "The clip takes place in a crowded train station.", {"audio_state": "visual_only"}),
    ("existence", "Un chico pasea en bicicleta por el parque.", {"audio_state": "visual_only"}),
    ("existence", "Una mujer lee un libro en la mesa.", {"audio_state": "visual_only"}),
    ("existence", "Une femme traverse la rue avec son chien.", {"audio_state": "visual_only"}),
    ("existence", "Un garçon fait du skate dans le parc.", {"audio_state": "visual_only"}),
    ("consistency", "La scène est un marché animé.", {"match": "none"}),
    ("consistency", "Un hombre anda en bicicleta por la calle.", {"match": "none"}),
    ("existence", "Una campana suena a lo lejos.", {"audio_state": "audio_described"}),  # a bell is heard
])
def test_a_scene_described_without_a_word_about_sound_is_visual_only(dimension, answer, expected):
    read_as(dimension, answer, expected)


@pytest.mark.parametrize(("answer", "expected"), [
    ("可以听到雨声和汽车的喇叭声。", "audio_described"),
    ("能听见远处的鸣笛。", "audio_described"),
    ("不能听到任何声音。", "muted"),  # "cannot hear": the negation is glossed with the verb
    ("没有听到任何声音。", "muted"),
])
def test_chinese_can_hear_describes_audio_and_cannot_hear_is_silence(answer, expected):
    read_as("existence", answer, {"audio_state": expected})


# ------------------------------------------------------------------------------------------------ denied amounts
@pytest.mark.parametrize(("answer", "expected"), [
    # "not X but Y" is Y; an elliptic Y takes the denied words ("not delayed by 2 s but by 1 s": delayed by 1 s)
    ("It is not delayed by 2 seconds but by 1 second.", desync("delay", 1.0)),
    ("The sound is delayed, not by 2 seconds but by 1.", desync("delay", 1.0)),
    ("It's not 2 seconds but half a second late.", desync("delay", 0.5)),
    ("There is not a 2 second delay, more like 3 seconds.", desync("delay", 3.0)),
    ("The audio isn't 2 s late but 1 s early.", desync("early", -1.0)),  # Y with its own direction
    ("The sound is early, but not by 2 seconds, only by half a second.", desync("early", -0.5)),
    ("The audio is 2 seconds late, not 1 second late.", desync("delay", 2.0)),
    ("The sound isn't 2 seconds late; it's perfectly in sync.", SYNCED),
    ("The audio is delayed, not by 2 seconds.", desync("delay")),  # the direction stands, the amount is denied
    ("El audio no está retrasado 2 segundos sino 1 segundo.", desync("delay", 1.0)),
    ("Der Ton ist nicht 2 Sekunden zu spät, sondern 1 Sekunde.", desync("delay", 1.0)),
    ("Le son n'est pas en retard de 2 secondes mais de 1 seconde.", desync("delay", 1.0)),
    # not a denial: a sync word, "until" or a clause break stands between the negation and the amount
    ("The audio is not synchronized, delayed by 2 s.", desync("delay", 2.0)),
    ("The audio isn't in sync and lags by 2 s.", desync("delay", 2.0)),
    ("The sound isn't heard until 2 seconds later.", desync("delay", 2.0)),
    ("There's no delay, not even 100 ms.", SYNCED),
])
def test_a_denied_amount_is_replaced_by_the_amount_that_follows_it(answer, expected):
    read_as("sync", answer, expected)


@pytest.mark.parametrize("answer", [
    "The sound isn't 2 seconds late.",  # it denies one offset and states none
    "The sound doesn't arrive 2 seconds late.",
    "The audio is not delayed by 2 seconds.",
    "There is no 2-second delay.",
    "It doesn't seem to be 2 s late.",
    "El sonido no llega 2 segundos tarde.",
    "Der Ton kommt nicht 2 Sekunden zu spät.",
    "Le son n'arrive pas 2 secondes trop tard.",
])
def test_a_denied_amount_alone_is_not_read(answer):
    assert extract("sync", answer) == NO_FIELDS["sync"], answer


# ------------------------------------------------------------------------------------------------ negated order
@pytest.mark.parametrize("answer", [
    "The sound does not precede the picture.",  # early, late or in sync: it does not say
    "The sound does not follow the picture.",
    "The sound does not lead the picture.",
    "The audio is not leading the video.",
    "The audio never trails the video.",
    "The sound doesn't trail behind the picture.",
    "The audio doesn't come before the impact.",
    "The thud doesn't come after the fall.",
    "The video does not follow the audio.",
    "El sonido no precede a la imagen.",
    "Der Ton kommt nicht vor dem Bild.",
])
def test_a_negated_order_is_not_read(answer):
    assert extract("sync", answer) == NO_FIELDS["sync"], answer


@pytest.mark.parametrize(("answer", "expected"), [
    ("The sound does not precede the picture; it lags by 1 s.", desync("delay", 1.0)),
    ("The sound does not precede the picture; they are in sync.", SYNCED),
    ("The sound doesn't occur before the ball hits, it comes 2 s after.", desync("delay", 2.0)),
    ("The thud comes not long after the fall.", desync("delay")),  # "not long after" is soon after
    ("The sound isn't heard until later.", desync("delay")),
    # "lag" is an offset word: negated, it claims synchrony, as "no delay" does
    ("The audio doesn't lag behind the picture at all.", SYNCED),
])
def test_a_claim_beside_a_negated_order_is_read(answer, expected):
    read_as("sync", answer, expected)


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    # a negation covers the words coordinated after it
    ("sync", "The audio is not delayed or early.", SYNCED),
    ("sync", "Nothing is delayed or early; it's in sync.", SYNCED),
    ("consistency", "The audio matches; it is not dubbed or replaced.", {"match": "match"}),
    ("consistency", "The audio is neither dubbed nor replaced.", {"match": "match"}),
    ("consistency", "The sound isn't out of place or unrelated.", {"match": "match"}),
    ("consistency", "The audio is not dubbed, swapped or replaced; it fits the scene.", {"match": "match"}),
    ("consistency", "The sound is not dubbed or from another clip.", {"match": "match"}),
    ("consistency", "Nothing is odd or out of place: the barking fits the dog.", {"match": "match"}),
    ("consistency", "The sound doesn't fit or match the scene.", {"match": "mismatch"}),
    # a negation does not reach past a clause
    ("consistency", "The audio isn't dubbed, but the music is out of place.", {"match": "mismatch"}),
    ("consistency", "The audio is not dubbed; it was replaced with birdsong from another clip.",
     {"match": "mismatch"}),
])
def test_a_negation_covers_the_words_coordinated_after_it(dimension, answer, expected):
    read_as(dimension, answer, expected)


# ------------------------------------------------------------------------------------------------ ranges
@pytest.mark.parametrize(("answer", "expected"), [
    # a range states no one offset: the direction stands, the offset is not read (never its upper end)
    ("The audio is delayed by 1 or 2 seconds.", desync("delay")),
    ("The audio is delayed by 1-2 s.", desync("delay")),
    ("The audio is 1 to 2 seconds late.", desync("delay")),
    ("The audio lags by between 1 and 2 seconds.", desync("delay")),
    ("The audio lags by a second or two.", desync("delay")),
    ("Delayed by 200 to 300 ms.", desync("delay")),
    ("It's off by one or two seconds, the audio being early.", desync("early")),
    ("El audio está retrasado uno o dos segundos.", desync("delay")),
    ("El audio está retrasado entre 1 y 2 segundos.", desync("delay")),
    ("Der Ton ist um 1 bis 2 Sekunden verzögert.", desync("delay")),
    ("Le son est en retard de 1 ou 2 secondes.", desync("delay")),
    # no range
    ("The audio lags by a second or so.", desync("delay", 1.0)),
    ("The audio is delayed by 2 s - a clear lag.", desync("delay", 2.0)),
    ("The audio is delayed by a 1.5-second gap.", desync("delay", 1.5)),
])
def test_a_range_keeps_the_direction_and_states_no_offset(answer, expected):
    read_as("sync", answer, expected)


def test_a_range_in_a_structured_offset_states_no_offset():
    read_as("sync", '{"synchronized": false, "direction": "late", "offset": "1-2 s"}', desync("delay"))


# ------------------------------------------------------------------------------------------------ a quiet place
@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    # "quiet" / "silent" said of a place, a person or a scene describes the picture
    ("existence", "The setting is a quiet kitchen.", "visual_only"),
    ("existence", "The scene is a quiet street at night.", "visual_only"),
    ("existence", "A quiet man reads a book in a library.", "visual_only"),
    ("existence", "The video shows a silent crowd watching a fire.", "visual_only"),
    ("existence", "The clip takes place in a quiet and peaceful forest.", "visual_only"),
    ("existence", "La escena es una cocina silenciosa.", "visual_only"),
    ("existence", "La scène est une cuisine silencieuse.", "visual_only"),
    ("consistency", "The visuals show a quiet forest.", "none"),
    # said of the soundtrack or the clip, or alone, it still counts
    ("existence", "It's quiet, no sound.", "muted"),
    ("existence", "It's quiet.", "muted"),
    ("existence", "It's a quiet video.", "muted"),
    ("existence", "The video is quiet throughout.", "muted"),
    ("existence", "The clip is silent; a man walks in a quiet park.", "muted"),
    ("existence", "The audio is quiet.", "audio_described"),
    ("existence", "A quiet hum plays in a quiet kitchen.", "audio_described"),
])
def test_quiet_said_of_a_place_is_no_silence(dimension, answer, expected):
    field = "audio_state" if dimension == "existence" else "match"
    read_as(dimension, answer, {field: expected})
