"""Rule-based extraction of structured answers from free-form responses to the intervention questions.

The paper parses free-form answers with an LLM judge (Thud appendix G.3); this is the offline, deterministic
fallback. It reads only the model's response, never the target, and returns ``None`` for a field it cannot decide
(counted as unparseable, never guessed): an empty, hedged ("hard to tell whether it is in sync") or off-topic answer
gets no class. Fields:

- sync: ``synced`` (bool), ``direction`` (delay | early | none), ``offset_s`` (signed: + = audio delayed);
- existence: ``audio_state`` (muted | audio_described | visual_only), as the paper's judge classes;
- consistency: ``match`` (match | mismatch | none: no judgement, e.g. a visual-only answer).

How phrasings are read (each rule is covered by the labelled set in ``.extract_labelled``):

- negations are claims: "no noticeable delay" says synchronized, "no mismatch" says match, "no music, only wind"
  describes wind; a whole-track silence claim ("the clip is silent") wins unless it names an exception ("except a
  faint hum"); a hypothetical sound ("would normally make a thud") is no description;
- direction follows the grammatical subject: "the audio lags" is a delay, "the video lags behind the audio" means the
  audio is early; "after"/"before" count only with a stated subject ("the thud is heard after the impact"); a noun
  after a preposition is no subject ("a gap between the audio and the video"), unless it leads an absolute clause
  ("with the audio arriving 2 s too late": the audio);
- the offset is the stated one ("by about 2 s", "200 ms"), else the difference of an audio and a visual timestamp
  ("the fall occurs at 5.0 s, the impact sound is heard at 3.1 s": early by 1.9 s), which also gives the direction;
- text inside questions and "whether/if" clauses is not a claim, so "I can't tell whether it is synchronized" stays
  unparsed; a bare "Yes"/"No" answers the sync question (synchronized / not synchronized, no direction);
- a negated synchrony claim is a desynchrony claim ("does not line up", "doesn't coincide", "do not occur at the same
  time", "non-synchronized"), and alternatives are no claim ("synchronized or not", "early or delayed");
- a claim negated as a whole ("it's not the case that ...", "it is not true that ...", "I don't think ...") is read
  as its opposite where that is one claim (synchronized <-> out of sync, match <-> mismatch) and as nothing
  otherwise ("it's not the case that the audio is delayed": early or in sync, it does not say);
- amounts: "a second and a half" / "one and a half seconds" is 1.5 s; a stated zero offset ("the offset is 0
  seconds") is synchrony; a range ("1-2 s", "by one or two seconds", "a second or two") keeps its direction and
  states no offset; a denied amount ("isn't 2 seconds late", "doesn't arrive 2 s late", "no 2-second delay") claims
  nothing, not synchrony, and "not X but Y" is Y ("not delayed by 2 s but by 1 s": delayed by 1 s);
- a negated order ("does not precede / follow / lead / trail", "doesn't come before / after") claims nothing, where
  a negated offset word ("no delay", "isn't late", "doesn't lag behind") claims synchrony; a negation covers the words
  coordinated after it ("not delayed or early": in sync; "not dubbed or replaced": a match);
- "quiet" / "silent" said of a place, a person or a scene ("the setting is a quiet kitchen", "a silent crowd") is
  no silence of the soundtrack ("the clip is quiet", "it's quiet, no sound" still are);
- what is not an answer stays unparsed: the question echoed back (a sentence in question order or an instruction:
  "Describe the audio you hear", "Answer 'synchronized' or ..."), a bare topic word ("Audio", "Sound", repeated or
  after tokenizer noise), gibberish and off-topic text. ``visual_only`` (existence) and ``none`` (consistency) need
  an answer that describes the scene (a picture frame such as "the video shows", or someone or something doing
  something: "a man rides a bike", "a dog running"), so "The capital of France is Paris." is no audio dodge;
- doubt is never read as an answer: two incompatible claims with no final word ("synchronized ... delayed by 2 s",
  "there is no sound. I hear a dog", "the audio matches the video ... is unrelated to it") read as nothing; a
  correction ("Perfectly synced... actually no, it lags by half a second", "on closer listening ...") or a first
  impression given up ("at first it seemed synchronized, but the sound is 2 s late", "initially", "I thought")
  reads the final claim, and nothing when none follows; ruling one direction out beside the other ("not delayed
  but early") claims the other, not synchrony; an incongruity ("odd for an indoor kitchen", "wouldn't expect ... in",
  "birdsong in a kitchen is strange") is a mismatch, a negated one ("nothing about the audio feels out of place") a
  match; a split verdict ("partly matches, partly doesn't", "matches the picture, but not the music") is nothing; a
  joke retracted ("just kidding, ...") or a "final answer:" reads the claim that follows;
- possibilities offered as alternatives claim neither (sync and consistency): "it might match, or it might be from
  another clip", "maybe early, maybe late", "either delayed or early";
- a description of what is seen and heard is no verdict (consistency: nothing read; sync: nothing read): "I see a
  red ball hit the floor, and I hear glass shattering", "the ball bounces twice and I hear two thuds", unless it says
  so ("..., which matches", "they don't match", "the sound suits the scene") or names each sound heard as the sound
  of what is seen ("I see a ball bounce and I hear a bounce", "a man speaks and I hear his voice": a match); a
  verdict word as an attribute ("players in matching jerseys", "a natural landscape") is no verdict. On the
  existence question a sound described is an answer ("I hear a dog barking": a sound), but someone speaking in a
  picture description is seen ("the video shows a man talking": visual only), as a sound event there is;
- silence is also "the soundtrack is blank / empty" and "Nothing." as the answer to what is heard;
- a structured answer is read field by field: a JSON object (``{"synchronized": false, "direction": "delayed",
  "offset_seconds": 1.2}``; keys such as synced / in_sync / direction / offset / offset_ms / audio_state /
  sound_present / match / consistent) or key-value lines ("- Synchronized: no\n- Direction: early\n- Offset: about 1
  second"); fields that contradict each other ("synchronized": true with a direction) or the prose beside them, or a
  known key whose value cannot be read ("synchronized": "true or false"), read as nothing;
- noise is no answer (``is_noise``): empty text, byte noise, tokenizer markers, one word repeated;
- Spanish, Chinese, German and French answers are read through an English gloss of their sync, sound and scene
  phrases (``.extract_gloss``); a phrase the lexicon does not know is left untranslated, so such an answer stays
  unparsed rather than misread; an answer in a language with no gloss is not read at all (never by the English rules
  raw, where a cognate such as "correspond" would be read without its "ne ... pas").

The LLM extractor (``llm_extract``, ``--extractor``) asks a judge to pick one of ``LLM_OPTIONS`` and reads its reply
with ``read_extractor_reply`` (JSON, a quoted option, a cue, an option alone on a line; nothing when they disagree);
a noise answer is not sent. ``unread(fields)`` marks the answers the rules leave unread, the ones a hybrid reading
(rules first) would hand to the extractor.
"""

from __future__ import annotations

from omniaudit.data_builders.interventions.extract_consistency import read_consistency
from omniaudit.data_builders.interventions.extract_existence import read_existence
from omniaudit.data_builders.interventions.extract_structured import structured_or_final
from omniaudit.data_builders.interventions.extract_sync import read_sync


def extract_sync(response: str) -> dict:
    """``synced`` / ``direction`` / ``offset_s`` of an answer to the sync question (all None: no reading): the final
    commitment after a correction or first impression, nothing for two incompatible claims or noise."""
    return structured_or_final("sync", read_sync, response)


def extract_existence(response: str) -> dict:
    """``audio_state`` of an answer to the existence question (None: no reading), from its final commitment."""
    return structured_or_final("existence", read_existence, response)


def extract_consistency(response: str) -> dict:
    """``match`` of an answer to the consistency question (None: no reading), from its final commitment."""
    return structured_or_final("consistency", read_consistency, response)


EXTRACTORS = {"sync": extract_sync, "existence": extract_existence, "consistency": extract_consistency}


def extract(dimension: str, response: str) -> dict:
    """Structured fields of one response to the question of ``dimension``; a reasoning trace (``<think>...</think>``,
    :func:`~omniaudit.runners.reasoning.split_reasoning`) is never read, and a reply cut off inside one has none."""
    from omniaudit.runners.reasoning import split_reasoning

    split = split_reasoning("" if response is None else str(response))
    return EXTRACTORS[dimension]("" if split.cut else split.answer)
