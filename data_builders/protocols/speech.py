"""Embedded default: a small multilingual, multi-voice speech set synthesised offline with espeak-ng.

Four languages, four voices (the speaker attribute), four prosody presets (the "emotion" attribute: pitch, rate and
loudness settings, so the classes differ acoustically), and degraded copies with synthetic MOS (naturalness). The
labels are real properties of the audio, so language, speaker and prosody probes test listening, not guessing.
Written as 16 kHz mono PCM WAVs plus a manifest (JSONL) in the format users bring.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from omniaudit.errors import InputError
from omniaudit.io import atomic_dir

RATE = 16000
SENTENCES = {  # the first 4 per language are the default's; all 12 give a set with three times the clips (power)
    "en": ["The train leaves the station at seven.", "Please put the book back on the shelf.",
           "We walked along the river this morning.", "The window in the kitchen is open.",
           "The children are playing in the garden.", "She forgot her umbrella at the office.",
           "The bakery opens early on Sundays.", "He is painting the fence blue.",
           "Our neighbours have a small black dog.", "The bus was late again today.",
           "I will call you after dinner.", "The museum is closed on Mondays."],
    "fr": ["Le train quitte la gare à sept heures.", "Remets le livre sur l'étagère, s'il te plaît.",
           "Nous avons marché le long de la rivière ce matin.", "La fenêtre de la cuisine est ouverte.",
           "Les enfants jouent dans le jardin.", "Elle a oublié son parapluie au bureau.",
           "La boulangerie ouvre tôt le dimanche.", "Il peint la clôture en bleu.",
           "Nos voisins ont un petit chien noir.", "Le bus était encore en retard aujourd'hui.",
           "Je t'appellerai après le dîner.", "Le musée est fermé le lundi."],
    "de": ["Der Zug verlässt den Bahnhof um sieben.", "Bitte stell das Buch zurück ins Regal.",
           "Wir sind heute Morgen am Fluss entlang gegangen.", "Das Küchenfenster ist offen.",
           "Die Kinder spielen im Garten.", "Sie hat ihren Regenschirm im Büro vergessen.",
           "Die Bäckerei öffnet sonntags früh.", "Er streicht den Zaun blau.",
           "Unsere Nachbarn haben einen kleinen schwarzen Hund.", "Der Bus war heute wieder zu spät.",
           "Ich rufe dich nach dem Abendessen an.", "Das Museum ist montags geschlossen."],
    "es": ["El tren sale de la estación a las siete.", "Por favor, devuelve el libro a la estantería.",
           "Caminamos junto al río esta mañana.", "La ventana de la cocina está abierta.",
           "Los niños juegan en el jardín.", "Ella olvidó su paraguas en la oficina.",
           "La panadería abre temprano los domingos.", "Él pinta la valla de azul.",
           "Nuestros vecinos tienen un perro negro pequeño.", "El autobús llegó tarde otra vez hoy.",
           "Te llamaré después de la cena.", "El museo está cerrado los lunes."],
}
MAX_SENTENCES = 12  # per language of SENTENCES
LANGUAGE_NAMES = {"en": "English", "fr": "French", "de": "German", "es": "Spanish"}
VOICES = {"spk_m1": "m1", "spk_m3": "m3", "spk_f2": "f2", "spk_f4": "f4"}
# espeak-ng pitch (0-99), speed (words per minute), amplitude (0-200)
PROSODY = {"neutral": (50, 165, 100), "angry": (65, 215, 190), "sad": (25, 120, 60), "happy": (85, 190, 130)}
MOS_CLEAN, MOS_DEGRADED = 4.0, 1.8


@dataclass(frozen=True)
class SpeechSetSpec:
    sentences_per_cell: int = 2  # sentences per (language or emotion) x speaker cell
    degraded: int = 8  # neutral clips that get a degraded copy for the naturalness pairs
    seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.sentences_per_cell <= MAX_SENTENCES:
            raise InputError(f"sentences_per_cell must be 1..{MAX_SENTENCES}", value=self.sentences_per_cell)

    def as_dict(self) -> dict:
        return asdict(self)


def espeak(text: str, language: str, voice: str, prosody: tuple[int, int, int]) -> np.ndarray:
    """Speak ``text`` with espeak-ng; float32 mono at 16 kHz."""
    import soundfile as sf
    from scipy.signal import resample_poly

    exe = shutil.which("espeak-ng")
    if exe is None:
        raise InputError("the embedded speech set needs espeak-ng (Debian: apt-get install espeak-ng); "
                         "or pass your own clips with --clips")
    pitch, speed, amplitude = prosody
    with tempfile.NamedTemporaryFile(suffix=".wav") as tmp:
        subprocess.run([exe, "-v", f"{language}+{voice}", "-p", str(pitch), "-s", str(speed), "-a", str(amplitude),
                        "-w", tmp.name, text], check=True, capture_output=True)
        audio, rate = sf.read(tmp.name, dtype="float32")
    return resample_poly(audio, RATE, rate).astype(np.float32) if rate != RATE else audio


def degrade(audio: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Telephone band, hard clipping and hiss: clearly less natural, same words and voice."""
    from scipy.signal import butter, sosfilt

    band = sosfilt(butter(4, [300, 3000], btype="band", fs=RATE, output="sos"), audio)
    clipped = np.clip(band * 6.0, -0.3, 0.3)
    hiss = 0.02 * rng.standard_normal(audio.size)
    return (clipped + hiss).astype(np.float32)


def synthesize_speech_set(out_dir: str | Path, spec: SpeechSetSpec = SpeechSetSpec(),
                          sentences: dict[str, list[str]] | None = None) -> Path:
    """Write the clips and ``manifest.jsonl`` (rows: id, audio, attribute, label, transcript, speaker, mos).

    ``sentences``: per language code of :data:`SENTENCES` (all four), at least ``spec.sentences_per_cell`` sentences
    to speak instead of the embedded ones (e.g. a training set whose clips the embedded set never holds)."""
    import soundfile as sf

    sentences = SENTENCES if sentences is None else sentences
    if set(sentences) != set(SENTENCES) or min(map(len, sentences.values())) < spec.sentences_per_cell:
        raise InputError(f"sentences: {spec.sentences_per_cell} or more per language of {sorted(SENTENCES)}",
                         value={k: len(v) for k, v in sentences.items()})

    rng = np.random.default_rng(spec.seed)
    rows: list[dict] = []
    clips: dict[str, np.ndarray] = {}
    meta: dict[str, dict] = {}

    def clip(language: str, speaker: str, emotion: str, k: int) -> str:
        cid = f"{language}_{speaker}_{emotion}_s{k}"
        if cid not in clips:
            clips[cid] = espeak(sentences[language][k], language, VOICES[speaker], PROSODY[emotion])
            meta[cid] = {"transcript": sentences[language][k], "speaker": speaker}
        return cid

    def row(cid: str, attribute: str, label: str, **extra) -> None:
        rows.append({"id": cid, "audio": f"{cid}.wav", "attribute": attribute, "label": label, **meta[cid], **extra})

    n = spec.sentences_per_cell
    for emotion in PROSODY:  # emotion probe set: English, balanced over emotions and speakers
        for speaker in VOICES:
            for k in range(n):
                row(clip("en", speaker, emotion, k), "emotion", emotion)
    for language in sentences:  # language probe set: neutral prosody, balanced over languages and speakers
        for speaker in VOICES:
            for k in range(n):
                cid = clip(language, speaker, "neutral", k)
                row(cid, "language", LANGUAGE_NAMES[language])
                row(cid, "speaker", speaker)
    neutral = sorted(c for c in clips if "_neutral_" in c)
    for cid in [neutral[i] for i in rng.permutation(len(neutral))[: spec.degraded]]:
        row(cid, "naturalness", "natural", mos=MOS_CLEAN)
        bad = f"{cid}_degraded"
        clips[bad], meta[bad] = degrade(clips[cid], rng), meta[cid]
        row(bad, "naturalness", "degraded", mos=MOS_DEGRADED)
    with atomic_dir(out_dir) as tmp:
        for cid, audio in clips.items():
            sf.write(tmp / f"{cid}.wav", audio, RATE, subtype="PCM_16")
        (tmp / "manifest.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                            encoding="utf-8")
    return Path(out_dir) / "manifest.jsonl"
