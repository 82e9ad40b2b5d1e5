"""The card's glossary: every term the card uses (verdicts, statistics, the audits' own words), one definition each,
shown at the end of ``scorecard.md`` / ``scorecard.html`` (the terms that card uses) and as the docs page
``docs/glossary.md`` (all of them: ``python -m omniaudit.evaluation.scorecard.glossary --docs`` writes it). The first
use of each term on a card links to its entry on the same page (``#glossary-SLUG``), so a card read offline still
explains itself.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from omniaudit.evaluation.scorecard.inference import FWER

HEADING = "Glossary"
STYLE = ("a.term{color:inherit;text-decoration:underline dotted}dl.glossary dt{font-weight:bold;margin-top:.6em}"
         "dl.glossary dd{margin-left:1.5em}")


@dataclass(frozen=True)
class Term:
    """A glossary entry: its name, what it means, and how it is written on a card (regular expressions matched
    case-sensitively as whole words; the name itself when none are given)."""

    name: str
    meaning: str
    forms: tuple[str, ...] = ()
    group: str = "statistics"
    slug: str = field(default="")

    @property
    def anchor(self) -> str:
        return "glossary-" + (self.slug or re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-"))

    @property
    def patterns(self) -> tuple[str, ...]:
        return self.forms or (re.escape(self.name),)


GROUPS = {"verdicts": "Verdicts", "statistics": "Statistics", "models": "Models and runs",
          "shortcuts": "Shortcuts", "audits": "Audits", "items": "Items and measures"}

_V, _M, _I = "verdicts", "models", "items"
STATIC: tuple[Term, ...] = (
    Term("FLAGGED", "the model takes the shortcut: a simultaneous CI of one of its measures excludes the null on the "
         "shortcut's side and the items do not rule out the minimum effect of interest. A two-sided measure names "
         "its direction, a flag confined to one stratum names it (FLAGGED in concat).", ("FLAGGED", "flagged"), _V),
    Term("clear", "ruled out: the one-sided 95% bound stays within the null plus the shortcut's minimum effect of "
         "interest (an equivalence test). Whatever the model does there, it is less than that minimum.",
         (r"clear(?!, small)",), _V),
    Term("clear, small", "clear, and the CI also excludes the null: a real effect, measured to be below the minimum "
         "effect of interest.", (r"clear, small",), _V),
    Term("inconclusive", "neither flagged nor clear: too few items to tell. The cell shows the MDE these items can "
         "detect and about how many clusters would decide.", group=_V),
    Term("not measured", "the measure had nothing to measure for this model: its audit did not run (a modality "
         "the model does not accept) or had no items, or fewer than two clusters, for it.", group=_V),
    Term("not answering", "the model gave too few usable answers on this audit (--min-usable, default 20%): never "
         "a finding, neither for nor against the shortcut.", group=_V),
    Term("REMOVED", "against a baseline: the old model was flagged, the new one is clear, and every measure that "
         "flagged it moved towards its null with a paired interval excluding 0. reduced: moved so, but not clear; "
         "introduced: flagged for the new model only.", ("REMOVED", "removed", "reduced", "introduced"), _V),
    Term("null", "the value a content-blind model has on those very items, computed item by item (0.5 for a "
         "slot-A rate, 0 for a gap): each measure is tested against it, not against a textbook constant.",
         (r"null(?!s)", "nulls"), slug="null"),
    Term("content-blind", "a model that does not use the evidence (the descriptions, the sound, the picture) but may "
         "see everything else: which slot, how long, which label was supplied."),
    Term("CI", "confidence interval, shown as [low, high]. Cluster-robust (Student-t on clusters - 1 degrees of "
         "freedom) and simultaneous over the model's family of tests.", (r"CI", r"CIs")),
    Term("simultaneous", "holds for the whole family of one model's measures at once (Bonferroni): at most "
         f"{FWER:.0%} of models without any shortcut get any flag (measured by simulation)."),
    Term("family", "all the counted measures of one model, tested together (their number is the Bonferroni "
         "divisor).", (r"family", r"Bonferroni")),
    Term("one-sided 95% bound", "the bound that decides clear: the 95% upper bound (lower and upper for a two-sided "
         "measure) of the value, which must stay within the null plus the minimum effect of interest.",
         (r"95% bounds?",)),
    Term("minimum effect of interest", "the smallest departure from the null that counts as taking the shortcut, "
         "fixed per measure in the shortcut table (0.10 to 0.20 for rates and shares, 20 points for the Avg Gap, "
         "30 for one dimension's gap).", (r"minimum effect(?: of interest)?",)),
    Term("MDE", "minimum detectable effect: the effect these items flag with 80% power. An MDE above the minimum "
         "effect of interest means too few items; the MDE shrinks as one over the square root of the clusters."),
    Term("clusters", "the independent units an interval resamples (pairs, clips, trials, samples): answers about "
         "one unit are not independent evidence.", (r"clusters?",)),
    Term("direction", "of a two-sided measure, which way it moved: slot A or slot B, longer or shorter, follows or "
         "avoids the label, the prior or against it.", (r"direction",)),
    Term("stratum", "a slice of the items a measure is also tested on by itself (concat / native, sync / existence / "
         "consistency, blueprint / reference / cue_conflict), so a shortcut confined to one is not averaged away.",
         (r"strat(?:um|a)",)),
    Term("shown, not used", "an audit's own figure shown beside the counted measures for context: never flags and "
         "is not part of the family.", (r"shown, not used",)),
    Term("points", "percentage points: WAF and the intervention gaps are on a 0-100 scale, the other measures on "
         "0-1.", (r"points",)),
    Term("paired change", "against a baseline, the change of a measure (or of task accuracy) on the same items, "
         "with its interval.", (r"paired change",)),
    Term("reference model", "a model run beside yours on the same items as calibration: the oracle, and planted "
         "models with one known shortcut each (scripted rules, or tiny models trained where the shortcut pays).",
         (r"(?<=\()reference(?=\))", r"[Rr]eference models?", r"[Rr]eference values"), _M),
    Term("oracle", "the reference model that answers from the ground truth: it must be clear everywhere.",
         group=_M),
    Term("planted", "a reference model built to take exactly one shortcut (pos, label, deaf, verbose, dominant, "
         "and the learned-* models): it must be flagged for it.", (r"planted",), _M),
    Term("calibration", "the check that the reference models come out as built: the oracle not flagged, each "
         "planted model flagged for its shortcut. Where it fails the card says so above the verdicts, and says "
         "nothing for the models under test on that shortcut (their verdicts there become inconclusive).",
         (r"calibration", r"CALIBRATION FAILED"), _M),
    Term("baseline", "the older model (--baseline NAME) a retrained model is compared with, measure by measure on "
         "the same items.", (r"baseline",), _M),
    Term("smoke run", "a card made with --limit N: at most N items per config, to check that every model answers "
         "and gets through the audits; its verdicts are not valid.", (r"smoke run",), _M),
    Term("embedded default", "the synthetic dataset omniaudit builds for an audit, with known ground truth "
         "(--size small: the quick sets, whose MDEs are wide; the default sets are sized by power).", group=_M),
    Term("parsed", "the share of the model's answers the audit could read as an answer; a reply read as no answer "
         "is unread, with the reason (doubt is never read as an answer).", (r"parsed", r"unread"), _M),
    Term("remedy", "what the papers prescribe to train a flagged shortcut away, with the commands (omniaudit remedy "
         "SHORTCUT prints them).", (r"[Rr]emed(?:y|ies)",), _M),
    Term("item config", "one set of an audit's items, each a config of its dataset: preference judge (pairs, in both "
         "orders), interventions diagnostic (each clip's Original and interventions), protocols blueprint, "
         "reference, pairwise and cue_conflict, composition samples (the full inputs) and ablations (one modality "
         "taken away).", (r"judge(?= \d)", r"diagnostic(?= \d)", r"samples(?= \d)", r"ablations(?= \d)",
                          r"item configs?"), _I),
    Term("WAF", "weighted F1 of the two classes (each class's F1 weighted by its support), in points (0-100): the "
         "preference benchmark's score. A tie counts half for each class.", group=_I),
    Term("counter-stereotypical", "preference pairs whose label goes against the generator prior learned on the "
         "other folds: a predictor following the prior scores 0 there.", group=_I),
    Term("generator prior", "which generator's description tends to win, learned on the training folds; following "
         "it is a style shortcut.", (r"generator prior", r"the prior"), _I),
    Term("slot A", "the first-shown candidate of a pair (slot B the second); the slot-A rate is the share of a "
         "pair's two orders in which the first-shown one was picked (0.5 for any judge blind to the order).",
         (r"slot[- ]A", r"slot B"), _I),
    Term("AB / BA", "the two orders a pair is shown in: each candidate first once.", (r"AB and BA", r"AB / BA",
                                                                                      r"ab - ba"), _I),
    Term("lock", "protocols pairwise: the share of non-identical trials on which the judge picks the same slot in "
         "AB and BA (a uniform guess: 0.5; a judge reading the content: less).", group=_I),
    Term("concat", "protocols pairwise format: both clips in one audio, joined by a 0.6 s 880 Hz tone.", group=_I),
    Term("native", "protocols pairwise format: the two clips as two audio inputs.", group=_I),
    Term("identical trials", "pairwise trials whose two clips are the same recording: any pick is right, so the "
         "slot picked shows the slot preference alone.", (r"identical(?:-trial)? trials?",), _I),
    Term("blueprint", "protocols config (RQ1): the clip, its description, and a specialist's label that is true, "
         "wrong, or absent (wrong_audio: the wrong label beside the audio).", group=_I),
    Term("reference (protocol)", "protocols config (RQ2): a reference label placed before or after the audio, in the "
         "system prompt or as a rubric hint.", (r"(?<=\[)reference(?=\])", r"reference(?= \d)"), _I,
         slug="reference-protocol"),
    Term("pairwise", "protocols config (RQ3): two clips judged in both orders, in the concat and native formats.",
         (r"pairwise(?! preference)",), _I),
    Term("cue_conflict", "protocols config: the specialist's label, the reference label, or both, against the clip "
         "(none, conf_spec, conf_ref, conf_both).", group=_I),
    Term("RF", "reference-follow rate: the share of answers on wrong-reference items that take the reference label "
         "(per placement: before, after, system, rubric).", group=_I),
    Term("Original", "interventions: the clip as recorded, the base of each paired gap.", group=_I),
    Term("Shift / Mute / Swap", "interventions on the clip's audio: moved in time, silenced, replaced by another "
         "clip's sound. A model that hears answers differently; one that infers the sound from the picture does not.",
         (r"Shift ?/ ?Mute ?/ ?Swap",), _I),
    Term("Avg Gap", "mean over the sync, existence and consistency dimensions of Original minus intervention "
         "accuracy, in points (Thud eq. 10): 0 for a model that hears, 100 for one that ignores the sound.",
         group=_I),
    Term("sync / existence / consistency", "the three intervention dimensions: is the sound in sync (Shift), is "
         "there a sound (Mute), does it belong to the picture (Swap).",
         (r"sync(?=[/ \]])", r"existence", r"consistency"), _I),
    Term("audio dodge", "a visual-only answer to a question about the sound (interventions' failure mode).",
         (r"audio dodge(?: rate)?",), _I),
    Term("dominance share", "composition: of the model's classified failures, the share one modality decides (the "
         "answer follows that modality when the other is ablated), over its per-sample null.",
         (r"dominance share",), _I),
    Term("stability floor", "composition: how often a second sampled run's answer differs from a failed one; an "
         "ablation that moves answers no more often than this says nothing.", group=_I),
    Term("classified failure", "composition: a failed answer whose ablations say which modality decided it.",
         (r"classified failures?",), _I),
)


def shortcut_terms() -> list[Term]:
    """One entry per shortcut of the table (:mod:`omniaudit.shortcuts`, registered ones included)."""
    from omniaudit.shortcuts import TABLE

    return [Term(s.name, f"the shortcut: {s.what}. Measured by: " + "; ".join(
        f"{m.title} ({m.audit}, minimum effect {m.delta:g}{' points' if m.unit == 'points' else ''})"
        for m in s.measures) + f". Planted reference: {s.card_name}.", group="shortcuts") for s in TABLE]


def audit_terms(audits: dict[str, dict] | None = None) -> list[Term]:
    """One entry per audit: those of a card (``scorecard.json`` ``audits``), or every built-in one."""
    if audits is None:
        from omniaudit.audits import BUILT_IN, get

        audits = {name: {"title": get(name).title, "paper": get(name).paper} for name in BUILT_IN}
    return [Term(name, f"the audit: {a.get('title', name)}" + (f" (specification: {a['paper']})." if a.get("paper")
                                                               else "."),
                 (rf"(?<![\w/]){re.escape(name)}(?=[ :,)\]]|$)",), "audits") for name, a in audits.items()]


def terms(audits: dict[str, dict] | None = None) -> list[Term]:
    return [*STATIC, *shortcut_terms(), *audit_terms(audits)]


class Linker:
    """Links the first use on a card of each term to its glossary entry, in Markdown (``[x](#glossary-x)``) or HTML
    (``<a class="term">``, its meaning as the tooltip); never inside code, a link, or an HTML tag. :meth:`scan` notes
    the terms of a text without linking them (a table cell kept as written); :meth:`used` is every term noted."""

    def __init__(self, entries: list[Term], as_html: bool) -> None:
        self.entries, self.as_html = entries, as_html
        forms = sorted(((p, i) for i, t in enumerate(entries) for p in t.patterns), key=lambda x: -len(x[0]))
        self._which = [i for _, i in forms]
        self._pattern = re.compile("|".join(f"(?<![\\w-])({p})(?![\\w-])" for p, _ in forms)) if forms else None
        keep = r"<code>.*?</code>|<a [^>]*>.*?</a>|<[^>]+>" if as_html else r"`[^`]*`|!?\[[^\]]*\]\([^)]*\)"
        self._keep = re.compile(f"({keep})", re.S)
        self.linked: set[int] = set()
        self.found: set[int] = set()

    def __call__(self, text: str) -> str:
        return self._each(text, self._link)

    def scan(self, text: str) -> str:
        """Note the terms of ``text``; returns it unchanged."""
        self._each(text, self._note)
        return text

    def _each(self, text: str, replace) -> str:
        if self._pattern is None:
            return text
        pattern = self._pattern
        parts = self._keep.split(text)
        return "".join(p if i % 2 else pattern.sub(replace, p) for i, p in enumerate(parts))

    def _note(self, match: re.Match) -> str:
        index = self._which[match.lastindex - 1] if match.lastindex else -1
        if index >= 0:
            self.found.add(index)
        return match.group(0)

    def _link(self, match: re.Match) -> str:
        index = self._which[match.lastindex - 1] if match.lastindex else -1
        if index < 0 or index in self.linked:
            return self._note(match)
        self.linked.add(index)
        self.found.add(index)
        term, word = self.entries[index], match.group(0)
        if self.as_html:
            return f"<a class=\"term\" href=\"#{term.anchor}\" title=\"{html.escape(term.meaning)}\">{word}</a>"
        return f"[{word}](#{term.anchor})"

    def used(self) -> list[Term]:
        """The terms noted so far (linked or scanned), in glossary order."""
        return [t for i, t in enumerate(self.entries) if i in self.found]


def markdown(entries: list[Term], level: int = 2) -> str:
    """The glossary section of ``scorecard.md``: one line per term, each with its anchor."""
    lines = ["#" * level + f" {HEADING}", ""]
    for group, title in GROUPS.items():
        inside = [t for t in entries if t.group == group]
        if inside:
            lines += ["#" * (level + 1) + f" {title}", ""]
            lines += [f"- <a id=\"{t.anchor}\"></a>**{t.name}**: {t.meaning}" for t in inside] + [""]
    return "\n".join(lines).rstrip() + "\n"


def html_section(entries: list[Term]) -> str:
    """The glossary section of ``scorecard.html``: a definition list, each term's ``id`` its anchor."""
    parts = [f"<h2 id=\"glossary\">{HEADING}</h2>"]
    for group, title in GROUPS.items():
        inside = [t for t in entries if t.group == group]
        if inside:
            parts.append(f"<h3>{html.escape(title)}</h3><dl class=\"glossary\">" + "".join(
                f"<dt id=\"{t.anchor}\">{html.escape(t.name)}</dt><dd>{html.escape(t.meaning)}</dd>" for t in inside)
                + "</dl>")
    return "".join(parts)


def docs_page() -> str:
    """``docs/glossary.md``: every term, the built-in audits and the shortcut table's shortcuts included."""
    intro = ("# Glossary\n\nEvery term the [scorecard](scorecard.md) uses, as its own glossary section defines it "
             "(a card lists the terms it uses at its end, and links each term's first use there). Written by "
             "`python -m omniaudit.evaluation.scorecard.glossary --docs` from `evaluation/scorecard/glossary.py`; "
             "the statistics behind the verdicts: [statistics](statistics.md).\n\n")
    body = markdown(terms(), level=1).split("\n", 2)[2]  # the page's own title replaces the section heading
    return intro + body


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", action="store_true", help="write docs/glossary.md (else print it)")
    args = parser.parse_args(argv)
    if args.docs:
        Path("docs", "glossary.md").write_text(docs_page(), encoding="utf-8")
    else:
        print(docs_page(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
