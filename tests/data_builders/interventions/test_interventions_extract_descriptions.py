"""A description of what is seen and heard is no verdict: the Thud readers abstain on it.

The consistency question asks a model to describe what it sees and hears. A reply that only describes both streams
("I see a red ball hit the floor, and I hear glass shattering") says nothing on whether they match; read as a match,
it made a correct model's Consistency gap 100 on swapped clips and flagged it for the visual_inference shortcut. The
same holds for the sync question ("the ball bounces twice and I hear two thuds" states no synchrony) and, for the
existence question, for someone seen speaking ("the video shows a man talking" is a picture, not a sound). Replies
that state a verdict beside the description still read.
"""

import pytest

from omniaudit.data_builders.interventions.extract import extract

UNREAD_SYNC = {"synced": None, "direction": None, "offset_s": None}

# both streams described, no word on their fit: nothing is read
CONSISTENCY_DESCRIPTIONS = [
    "I see that a red ball hits the floor and bounces, and I hear glass shattering.",
    "The video shows a dog running on a beach; the audio contains a baby crying.",
    "Visual: a chef chopping onions. Audio: a car horn honking.",
    "- What I see: a cat sleeping on a sofa\n- What I hear: a vacuum cleaner",
    "In the video, a man rides a bike. In the audio, I hear a church bell ringing.",
    "On screen a woman is cooking; in the audio, a man is giving a speech.",
    "A ball bounces on the floor. I can hear glass breaking and a dog barking.",
    "Visually, a ball hits the floor. Audibly, glass is shattering.",
    "I hear a dog barking.",
    "I see lightning and hear thunder.",
    # a word shared with the scene that is not the sound's source, or a source the scene does not have
    "I see a red ball hitting the floor, and I hear glass shattering on the floor.",
    "I see a man talking, and I hear a woman talking.",
    # one sound named as the scene's, another not
    "I see a ball bounce and I hear a bounce and glass shattering.",
    # a verdict word as an attribute of what is seen
    "I see two players in matching jerseys, and I hear a whistle.",
    "The video shows a natural landscape with a lake, and I hear traffic.",
    "I see a drummer keeping a consistent beat, and I hear birds chirping.",
    "A man in a suit speaks, and I hear traffic.",
    # glossed languages
    "Veo una pelota roja que golpea el suelo, y oigo cristales rompiéndose.",
    "Veo un perro corriendo y se oye una sirena.",
    "我看到一个红色的球撞到地板上弹起来，我听到玻璃破碎的声音。",
    "我看到一只狗在跑，听到汽车喇叭声。",
    "Ich sehe einen roten Ball, der auf den Boden fällt, und ich höre Glas zerbrechen.",
    "Ich sehe einen Hund rennen und ich höre eine Sirene.",
    "Je vois une balle rouge qui tombe par terre et rebondit, et j'entends du verre se briser.",
    "Je vois un chien qui court et j'entends une sirène.",
    # languages with no gloss are never read
    "Vejo uma bola vermelha a bater no chão e ouço vidro a partir-se.",
    "Vedo una palla rossa che colpisce il pavimento e sento un vetro che si rompe.",
    "Я вижу, как красный мяч ударяется об пол, и слышу звон разбитого стекла.",
    "赤いボールが床に当たって跳ねるのが見え、ガラスが割れる音が聞こえます。",
    "빨간 공이 바닥에 부딪혀 튀는 것이 보이고, 유리가 깨지는 소리가 들립니다.",
]


@pytest.mark.parametrize("reply", CONSISTENCY_DESCRIPTIONS)
def test_a_description_of_both_streams_is_no_consistency_verdict(reply):
    assert extract("consistency", reply) == {"match": None}


# the same descriptions with a verdict: it is read
CONSISTENCY_VERDICTS = [
    ("I see that a red ball hits the floor and bounces, and I hear glass shattering, which doesn't fit.", "mismatch"),
    ("I see that a red ball hits the floor, and I hear glass shattering; they don't match.", "mismatch"),
    ("I see a dog running, and I hear a baby crying; the sound is unrelated to the picture.", "mismatch"),
    ("I see a cat on a sofa and I hear a vacuum cleaner. The audio seems to come from a different clip.", "mismatch"),
    ("I see a ball hit the floor, and I hear a thud, which matches what I see.", "match"),
    ("I see a cat on a sofa and I hear a vacuum cleaner, which fits a living room.", "match"),
    ("I see a ball bounce and I hear a bounce, as expected.", "match"),
    ("I see two players in matching jerseys, and the whistle I hear fits the game.", "match"),
    ("The sound fits the action.", "match"),
    ("The crowd noise suits the stadium scene.", "match"),
    ("The music doesn't suit a funeral.", "mismatch"),
    ("The sound is a natural fit.", "match"),
    ("They don't match.", "mismatch"),
    ("The sound is unrelated.", "mismatch"),
    ("Veo una pelota y oigo cristales rompiéndose; el sonido no corresponde a la imagen.", "mismatch"),
    ("Veo una pelota que cae y oigo un golpe; el sonido coincide con la imagen.", "match"),
    ("我看到一个球落地，听到玻璃破碎的声音，声音和画面不匹配。", "mismatch"),
    ("我看到一个球落地，听到撞击声，声音和画面匹配。", "match"),
    ("Ich sehe einen Ball fallen und höre Glas zerbrechen. Der Ton passt nicht zum Bild.", "mismatch"),
    ("Ich sehe einen Ball fallen und höre einen Aufprall. Der Ton passt zum Bild.", "match"),
    ("Je vois une balle tomber et j'entends du verre se briser. Le son ne correspond pas à l'image.", "mismatch"),
    ("Je vois une balle tomber et j'entends un choc. Le son correspond à l'image.", "match"),
    # a structured verdict beside a description
    ("I see a ball bounce and I hear a bounce.\nMatch: no", "mismatch"),
    ('{"match": false, "reason": "I see a ball bounce and I hear glass shattering"}', "mismatch"),
]


@pytest.mark.parametrize(("reply", "match"), CONSISTENCY_VERDICTS)
def test_a_description_with_a_verdict_reads_the_verdict(reply, match):
    assert extract("consistency", reply) == {"match": match}


# each sound heard named as the sound of what is seen: the reply attributes the soundtrack to the picture (the
# paper's judge reads "I see a ball bounce and I hear a bounce" as a match)
CONSISTENCY_ATTRIBUTED = [
    "I see a ball bounce and I hear a bounce.",
    "I see a man hammering a nail, and I hear the hammer hitting it.",
    "I see a dog and I hear a dog barking.",
    "A man speaks and I hear his voice.",
    "The glass breaks and I hear it shatter.",
    "I see a ball bounce and hear what sounds like a bounce.",
    "I see a drummer and hear drums.",
    "The video shows a car and the audio contains its engine revving.",
    "Veo un perro y oigo un perro ladrando.",
    "我看到一只狗，听到狗叫声。",
    "Je vois un chien et j'entends un chien aboyer.",
]


@pytest.mark.parametrize("reply", CONSISTENCY_ATTRIBUTED)
def test_a_sound_named_as_the_scenes_own_reads_as_a_match(reply):
    assert extract("consistency", reply) == {"match": "match"}


def test_a_scene_without_a_sound_is_still_no_judgement():
    assert extract("consistency", "The video shows a man talking to the camera.") == {"match": "none"}
    assert extract("consistency", "I see a ball bounce, but I hear nothing.") == {"match": "none"}


SYNC_DESCRIPTIONS = [
    "The ball bounces twice and I hear two thuds.",
    "I see a ball bouncing and I hear thuds.",
    "A man claps his hands; I hear clapping.",
    "I see lightning and hear thunder.",
    "The video shows a ball falling; the audio has a thud.",
    "I see that a red ball hits the floor and bounces, and I hear glass shattering.",
    "La pelota rebota dos veces y oigo dos golpes.",
    "球弹了两次，我听到两声闷响。",
    "Der Ball springt zweimal und ich höre zwei dumpfe Schläge.",
    "La balle rebondit deux fois et j'entends deux bruits sourds.",
    "A bola quica duas vezes e ouço dois baques.",
    "ボールが2回跳ねて、ドンという音が2回聞こえます。",
]


@pytest.mark.parametrize("reply", SYNC_DESCRIPTIONS)
def test_a_description_is_no_sync_verdict(reply):
    assert extract("sync", reply) == UNREAD_SYNC


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The ball bounces twice and I hear two thuds, perfectly in sync.", {"synced": True, "direction": "none"}),
        ("The ball bounces twice and I hear two thuds, but they come about 1 second late.", {"direction": "delay"}),
        ("La pelota rebota y oigo un golpe, sincronizado.", {"synced": True}),
        ("Yes, the ball bounces and I hear a thud at the same time.", {"synced": True}),
    ],
)
def test_a_description_with_a_sync_verdict_reads_it(reply, expected):
    got = extract("sync", reply)
    assert {k: got[k] for k in expected} == expected, got


# the existence question asks what is heard: a sound described is a sound, whatever else is described
@pytest.mark.parametrize(
    "reply",
    [
        "I hear a dog barking.",
        "The ball bounces twice and I hear two thuds.",
        "I see that a red ball hits the floor and bounces, and I hear glass shattering.",
        "The video shows a woman speaking, and I hear her voice.",
        "I see a man talking; the audio is music.",
        "Oigo a un perro ladrando.",
        "我听到狗叫声。",
        "Ich höre einen Hund bellen.",
        "J'entends un chien aboyer.",
    ],
)
def test_a_sound_described_is_a_sound_on_the_existence_question(reply):
    assert extract("existence", reply) == {"audio_state": "audio_described"}


# someone seen speaking in a picture description is no sound heard, as a dog seen barking is not
@pytest.mark.parametrize(
    "reply",
    [
        "I see a man talking.",
        "The video shows a woman speaking to the camera.",
        "I see a woman speaking to a crowd.",
        "The video shows a dog barking.",
        "我看到一个男人在说话。",
        "Je vois un homme qui parle.",
    ],
)
def test_someone_seen_speaking_is_no_sound_on_the_existence_question(reply):
    assert extract("existence", reply) == {"audio_state": "visual_only"}


def test_silence_beside_someone_seen_speaking_is_still_muted():
    assert extract("existence", "I see a man talking, and there is no sound.") == {"audio_state": "muted"}
