"""How a memory plan (:mod:`omniaudit.memory_plan`) is printed: ``omniaudit plan``'s lines and the documentation's
table of every full-size recipe on 1 and 8 H100s (``python benchmarks/real_size.py --docs`` writes it between the
``memory-plan`` markers of docs/memory.md; a test checks it against this code)."""

from __future__ import annotations

from pathlib import Path

from omniaudit.memory_plan import GIB, H100_GIB, SETUPS, USABLE_SHARE, Plan, Setup, full_size_recipes, make_plan
from omniaudit.real_size import REAL_CONFIGS

MARKERS = ("<!-- memory-plan:start", "<!-- memory-plan:end -->")
DOCS = Path(__file__).resolve().parents[1] / "docs" / "memory.md"


def gib(n: int) -> str:
    return f"{n / GIB:.2f}"


def billions(n: int) -> str:
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.1f} M" if n >= 1e5 else f"{n:,}"


def _model_line(plan: Plan) -> str:
    folder = plan.shape.folder
    where = f"{plan.recipe.model}: {folder.name} (shipped config)" if folder.parent == REAL_CONFIGS else str(folder)
    head = "" if plan.params == plan.shape.params else ", LM head dropped (a score head)"
    return f"{where}, {billions(plan.params)} parameters in bf16{head}; training/{plan.recipe.script}.py"


def _training_line(plan: Plan) -> str:
    share = f"{100 * plan.trainable / plan.params:.2f}%"
    if not plan.recipe.lora:
        frozen = f", {' and '.join(plan.recipe.frozen_towers)} tower frozen" if plan.recipe.frozen_towers else ""
        return f"full fine-tuning{frozen}: {billions(plan.trainable)} trainable ({share})"
    where = "the language model" if plan.recipe.language_model_only else "every matching module"
    return (f"LoRA r={plan.recipe.r} on {', '.join(plan.recipe.targets)} of {where}: {billions(plan.trainable)} "
            f"trainable ({share}; heads not counted)")


def plan_lines(plan: Plan) -> list[str]:
    """What ``omniaudit plan`` prints for one recipe on one setup."""
    r, tokens = plan.recipe, plan.tokens
    usable = H100_GIB * USABLE_SHARE
    pairs = ", chosen and rejected each" if tokens.sequences > r.batch else ""
    lines = [f"{r.name} on {plan.setup.label} (estimated, per GPU)",
             f"model       {_model_line(plan)}",
             f"training    {_training_line(plan)}",
             f"sequence    {tokens.per_sequence:,} tokens ({tokens.note}) x {tokens.sequences} per GPU micro-batch "
             f"(per_device_train_batch_size {r.batch}{pairs}); gradient checkpointing "
             f"{'on' if r.checkpointing else 'off'}",
             "", f"  {'per GPU':<28}{'GiB':>8}"]
    notes = {"activations": plan.activations.formula}
    if plan.activations.head:
        notes["activations"] += f"; + LM head tiles {gib(plan.activations.head)} GiB"
    if plan.activations.towers:
        notes["activations"] += f"; + towers {gib(plan.activations.towers)} GiB"
    for name, value in plan.rows.items():
        lines.append(f"  {name:<28}{gib(value):>8}   {notes.get(name, '')}".rstrip())
    verdict = "fits" if plan.fits else "does NOT fit"
    lines += [f"  {'total':<28}{gib(plan.total):>8}   {verdict} an H100 80 GB ({usable:.1f} GiB usable of "
              f"{H100_GIB})",
              f"CPU memory per node: {gib(plan.cpu)} GiB",
              f"model states: DeepSpeed's estimate_zero{plan.setup.zero}_model_states_mem_needs for the "
              f"{billions(plan.trainable)} trainable parameters, + 2 bytes per frozen parameter"
              f"{' (on the CPU)' if plan.setup.offload and plan.setup.zero == 3 else ''}; activations: "
              "docs/memory.md's formula"]
    return lines


def _cell(plan: Plan) -> str:
    value = f"{plan.total / GIB:.1f}"
    return value if plan.fits else f"**{value} over**"


def docs_table(recipes: list[str] | None = None, setups: tuple[Setup, ...] = SETUPS) -> str:
    """The Markdown table of ``recipes`` (default: every full-size packaged recipe): per GPU GiB on each setup."""
    head = ["recipe", "model", "parameters", "trainable", "tokens per GPU", "activations", *(s.label for s in setups)]
    lines = ["| " + " | ".join(head) + " |", "| :--- | :--- |" + " ---: |" * (len(head) - 2)]
    for name in recipes or full_size_recipes():
        plans = [make_plan(name, setup) for setup in setups]
        first = plans[0]
        tokens = f"{first.tokens.per_sequence:,} x {first.tokens.sequences}"
        row = [f"`{name}`", first.shape.folder.name, billions(first.params),
               ("LoRA " if first.recipe.lora else "full ") + billions(first.trainable), tokens,
               f"{first.activations.total / GIB:.1f}{' (GC)' if first.recipe.checkpointing else ''}",
               *(_cell(p) for p in plans)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def docs_block(recipes: list[str] | None = None) -> str:
    """The table with its markers, as docs/memory.md holds it."""
    return (f"{MARKERS[0]} (written by `python benchmarks/real_size.py --docs`) -->\n\n{docs_table(recipes)}\n\n"
            f"{MARKERS[1]}")


def docs_section(text: str) -> str:
    """The marked block of a page's ``text``."""
    start, end = text.index(MARKERS[0]), text.index(MARKERS[1]) + len(MARKERS[1])
    return text[start:end]


def write_docs(path: Path = DOCS) -> None:
    """Replace the marked block of docs/memory.md with the table the code gives now."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(docs_section(text), docs_block()), encoding="utf-8")
