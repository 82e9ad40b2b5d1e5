"""What the commands share: the console, progress, the parser (and its help style), renamed flags, and every flag
group that more than one command takes, defined once here with its defaults and wording set per command."""

from __future__ import annotations

import argparse
import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from omniaudit.cli.numbers import fraction, integer, non_negative, non_negative_int, positive, positive_int, share
from omniaudit.cli.progress import console, log, progress_status, say, setup_logging  # noqa: F401

SPEC = "hf:PATH | openai:MODEL@URL | scripted:NAME | KIND:... (a runner plugin)"
DEPRECATED = "_deprecated"  # namespace attribute: old flag spelling -> its warning, printed by main() once


# pyproject.toml's optional dependencies, by the module a missing extra leaves unimportable: import name -> the
# smallest extra that has it. [infer] is the torch stack of hf: models, tiny-models and the data-parallel judge (torch
# is in [decode] too, but whatever loads a model needs [infer]); [train] = [infer] + TRL, PEFT, DeepSpeed and wandb.
# tests/test_extras.py checks the table against pyproject.
EXTRAS = {"torch": "infer", "torchvision": "infer", "transformers": "infer", "accelerate": "infer",
          "bitsandbytes": "infer", "peft": "train", "trl": "train", "deepspeed": "train", "torchcodec": "decode",
          "wandb": "track", "av": "media", "soundfile": "media", "opensmile": "media"}
TRAIN_COVERS = ("infer", "decode", "track")  # extras that [train] includes: a training script names [train] for them


def missing_extra(exc: ModuleNotFoundError, training: bool = False) -> str | None:
    """One line naming the extra to install when ``exc`` is a package of an optional extra not installed (the
    package itself, not a module inside an installed one: that is a version mismatch, left as it is); else None.
    ``training``: said for a training script (``accelerate launch training/...``), which needs all of [train]."""
    extra = EXTRAS.get(exc.name or "")
    if extra is None:
        return None
    if training and extra in TRAIN_COVERS:
        extra = "train"
    return (f"No module named '{exc.name}': this needs omniaudit's [{extra}] extra: pip install 'omniaudit[{extra}]' "
            "-c requirements/constraints.txt")


def print_outputs(out: Path, metrics: str = "audit.json") -> None:
    """Where a finished audit or report put its report and its metrics."""
    print(f"report: {out / 'report.md'}")
    print(f"metrics: {out / metrics}")


def print_pushed(repo: str | None) -> None:
    if repo:
        print(f"pushed to https://huggingface.co/datasets/{repo}")


# ----------------------------------------------------------------------------------------------- parser and commands
class Renamed(argparse.Action):
    """Store, as ``store`` does; a spelling in ``old`` still works but leaves a deprecation warning naming ``use``
    (default: the current spelling, the first), printed once per spelling after the command."""

    def __init__(self, option_strings, dest, old=(), use=None, **kwargs):
        self.old, self.use = tuple(old), use or option_strings[0]
        if kwargs.get("help") and self.old and len(self.old) < len(option_strings):
            kwargs["help"] += f" (old spelling {', '.join(self.old)}: deprecated)"
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string in self.old:
            notes = getattr(namespace, DEPRECATED, None) or {}
            notes[option_string] = f"{option_string} is deprecated; use {self.use}"
            setattr(namespace, DEPRECATED, notes)
        setattr(namespace, self.dest, values)


def renamed(p, new: str, *old: str, **kwargs) -> argparse.Action:
    """``new`` with its deprecated spellings ``old`` (listed in the help text, not as flags of their own)."""
    return p.add_argument(new, *old, action=Renamed, old=old, **kwargs)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's own, except that a renamed flag is listed by its current spelling only."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        old = getattr(action, "old", ())
        current = [s for s in action.option_strings if s not in old]
        if old and current:
            action = copy.copy(action)
            action.option_strings = current
        return super()._format_action_invocation(action)


class Parser(argparse.ArgumentParser):
    """The parser of every command (subcommands inherit the class, so the help style holds everywhere)."""

    def __init__(self, *args, formatter_class=HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)


@dataclass(frozen=True)
class Groups:
    """Where a module's ``register`` adds its commands: the top level, or under build / audit / report."""

    top: argparse._SubParsersAction
    build: argparse._SubParsersAction
    audit: argparse._SubParsersAction
    report: argparse._SubParsersAction


def command(group: argparse._SubParsersAction, name: str, func: Callable) -> argparse.ArgumentParser:
    """Add command ``name``, run by ``func``: its docstring's first paragraph is the one-line help (in the list of
    commands), the rest the description (atop ``--help``)."""
    summary, _, rest = inspect.cleandoc(cast(str, func.__doc__)).partition("\n\n")
    p = group.add_parser(name, help=" ".join(summary.split()), description=" ".join(rest.split()))
    p.set_defaults(func=func)
    return p


def writes_own_file(func: Callable) -> Callable:
    """Mark a command whose --out is a file (or a tree) it checks itself, instead of a folder main() checks."""
    func.own_out = True  # type: ignore[attr-defined]  # a function attribute main() reads
    return func


def shard(text: str) -> tuple[int, int]:
    """``--shard I/N``."""
    index, sep, count = text.partition("/")
    if not sep or not index.isdigit() or not count.isdigit() or not 0 <= int(index) < int(count):
        raise argparse.ArgumentTypeError(f"expected I/N with 0 <= I < N, e.g. 0/8 (got {text!r})")
    return int(index), int(count)


# ------------------------------------------------------------------------------------------------------ flag groups
OUT_FOLDER = ("output folder (replaced atomically; refused when it holds files omniaudit did not write, unless "
              "--overwrite)")
REPLACE_FOLDER = "replace --out even when it is not an earlier output of this command (deletes its contents)"
REPLACE_FILE = "replace an existing --out file that omniaudit did not write"


def add_out(p, help: str = OUT_FOLDER, overwrite: str | None = REPLACE_FOLDER, **kwargs) -> None:
    """``--out`` (required unless given a default) and, unless ``overwrite`` is None, ``--overwrite``."""
    kwargs.setdefault("required", "default" not in kwargs)
    p.add_argument("--out", help=help, **kwargs)
    if overwrite:
        p.add_argument("--overwrite", action="store_true", help=overwrite)


def add_tracking(p) -> None:
    g = p.add_argument_group("tracking")
    g.add_argument("--report-to", choices=["none", "wandb"], default="none",
                   help="log the headline metrics, tables, figures and predictions to wandb (needs the [track] "
                        "extra; WANDB_MODE=offline logs locally, WANDB_DIR says where) (default none)")
    g.add_argument("--project", help="wandb project (default $WANDB_PROJECT or omniaudit)")
    g.add_argument("--run-name", help="wandb run name (default: the command and the --out name)")


def add_min_usable(p, what: str) -> None:
    """``--min-usable SHARE`` (default ``run.MIN_USABLE``): answers that are an option named, or free text that is
    not empty, a refusal, an error reply or byte noise; ``what`` says what happens below it."""
    from omniaudit.evaluation.runners.run import MIN_USABLE

    p.add_argument("--min-usable", type=share, default=MIN_USABLE, metavar="SHARE",
                   help=f"{what} when fewer than this share of the answers are usable (an option named, or free text "
                        f"that is not empty, a refusal, an error reply or noise) (default {MIN_USABLE}; 0 keeps any "
                        "run; scripted: reference models are exempt)")


def add_partial(p) -> None:
    p.add_argument("--partial", action="store_true",
                   help="audit a predictions file that is one shard of a judge run (--shard I/N) or an incomplete "
                        "run; refused by default (missing answers would count as wrong). The report says so")


def add_bootstrap(p, old_seed: tuple[str, ...] = ("--seed",)) -> None:
    """``--n-resamples`` and ``--bootstrap-seed`` (``old_seed``: its deprecated spellings on this command)."""
    p.add_argument("--n-resamples", type=positive_int, default=2000, help="bootstrap resamples (default 2000)")
    renamed(p, "--bootstrap-seed", *old_seed, type=non_negative_int, default=0, help="bootstrap seed (default 0)")


def add_visibility(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--public", action="store_true",
                   help="create the Hub repo public (default: private; an existing public repo needs --public)")
    g.add_argument("--private", action="store_true", help="create the Hub repo private (the default; kept for old "
                                                          "scripts)")


def add_push(p) -> None:
    """``--push-to-hub REPO`` and the repo's visibility (private unless --public) for a builder."""
    g = p.add_argument_group("Hugging Face Hub")
    g.add_argument("--push-to-hub", metavar="REPO",
                   help="also push the dataset to this Hub dataset repo (private unless --public); only the files the "
                        "build wrote are uploaded")
    add_visibility(g)


def builder(groups: Groups, name: str, func: Callable, source: str, help: str, seed: str) -> argparse.ArgumentParser:
    """Command ``build name`` with what every builder takes: its input (``source``, also spelled --source; omitted:
    its embedded synthetic default), --out and --overwrite, the build's --seed, and --push-to-hub."""
    p = command(groups.build, name, func)
    p.add_argument(source, "--source", help=help)
    add_out(p)
    p.add_argument("--seed", type=non_negative_int, default=0, help=seed)
    add_push(p)
    return p


def add_helper_model(p, flag: str, does: str, *old: str) -> None:
    """An audit's extractor / grader (a runner answering for the audit) and its response cache."""
    renamed(p, flag, *old, metavar="SPEC", help=does)
    add_runner_options(p, "cache", role=flag.removeprefix("--"))


# ------------------------------------------------------------------------------------------------- runner options
def device_map(text: str) -> str:
    """``--device-map``: auto, balanced, sequential, cpu or cuda:N."""
    from omniaudit.evaluation.runners.hf_loading import DEVICE_MAPS, is_device_map

    if not is_device_map(text):
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(DEVICE_MAPS)} or cuda:N (got {text!r})")
    return text


# dest -> (add_argument options, help with {d}: the command's default, {role}: which model the option is for)
_RUNNER: dict[str, tuple[dict, str]] = {
    "batch_size": ({"type": positive_int, "default": 8}, "hf: items per forward pass ({d})"),
    "mode": ({"choices": ["logits", "generate"], "default": "logits"},
             "hf: read option logits (default) or generate text"),
    "max_tokens": ({"type": positive_int, "default": 32}, "longest answer in tokens (hf: when generating text) "
                                                          "(default {d}; raise it for thinking models)"),
    "fps": ({"type": positive, "default": 2.0},
            "video frames per second sampled (hf; openai with --dialect frames) (default {d})"),
    "max_frames": ({"type": positive_int, "default": 32}, "most frames per video, from its start (default {d}; "
                                                          "--dialect frames sends each as an image: lower it for "
                                                          "hosted APIs)"),
    "dialect": ({"choices": ["vllm", "openai", "frames", "auto"], "default": "vllm"},
                "openai: how media are sent: vllm = video_url, a video's own soundtrack through mm_processor_kwargs "
                "use_audio_in_video (vLLM, Qwen-Omni); openai = standard parts, video_url without its soundtrack; "
                "frames = no video_url: sampled JPEG frames + the soundtrack as input_audio (OpenAI, Gemini's "
                "OpenAI-compatible endpoint); auto = ask the server (/models owned_by, /version) before the first "
                "item: vllm for vLLM, else frames when a video's own soundtrack is input, else openai (warns what "
                "it picked and why). Audio (input_audio WAV) and images (image_url) are the same in all "
                "three (default {d})"),
    "answer_format": ({"choices": ["free", "choice", "json"], "default": "free"},
                      "closed items: free = the prompt's own free-text answer, read by the reader (default); choice "
                      "= constrained to exactly one option (openai: --dialect vllm sends structured_outputs.choice, "
                      "vLLM >= 0.12, which removed guided_choice; the other dialects a response_format JSON "
                      "schema); json = a JSON object {{\"answer\": OPTION}} through response_format (any "
                      "dialect). Every row says its answer_path: constrained, unconstrained (the server ignored the "
                      "constraint: read as free text), free or option_scores (hf --mode logits, which takes choice "
                      "as it is). openai: recorded in the provenance"),
    "concurrency": ({"type": positive_int, "default": 4}, "openai: requests in flight ({d})"),
    "max_retries": ({"type": non_negative_int, "default": 5}, "openai: retries per request, with backoff ({d})"),
    "timeout": ({"type": positive, "default": 120.0}, "openai: seconds for each request as a whole, from connecting "
                                                   "to the reply's last byte; each retry gets its own ({d})"),
    "max_reply_mb": ({"type": positive, "default": 8.0},
                     "openai: largest reply read, in MB; a bigger one is cut and kept as a non-answer ({d})"),
    "top_logprobs": ({"type": integer(0, 20), "default": 10}, "openai, closed items: ask for logprobs with this many "
                     "alternatives, read as option probabilities where the server returns them; 0 = do not ask "
                     "(default {d})"),
    "cache": ({}, "openai{role}: response cache folder (default $OMNIAUDIT_CACHE or ~/.cache/omniaudit, "
                  "judge-responses/)"),
    "no_cache": ({"action": "store_true"}, "openai: ask every request again and store nothing"),
    "api_key_env": ({"metavar": "VAR"}, "openai: environment variable holding the API key, sent only as a Bearer "
                    "header to the model's URL (never to a redirect target); 'none': no key. Default: none for a "
                    "loopback URL (localhost, 127.x, ::1), OPENAI_API_KEY otherwise"),
    "allow_insecure_key": ({"action": "store_true"}, "openai: send the key over plain http:// to a host that is "
                           "not this machine (refused otherwise)"),
    # hf: how a big checkpoint is loaded (evaluation.runners.hf_loading); recorded in the provenance only when given
    "device_map": ({"type": device_map, "metavar": "MAP"},
                   "hf: where the weights go: auto, balanced or sequential (spread over every visible GPU, then the "
                   "CPU; needs accelerate), cpu, or cuda:N (default: the whole model on one device, a GPU when there "
                   "is one)"),
    "torch_dtype": ({"choices": ["auto", "bfloat16", "float16", "float32"], "default": "auto"},
                    "hf: the weights' dtype; auto = the checkpoint's own (default {d})"),
    "load_in": ({"choices": ["4bit", "8bit"]},
                "hf: quantise the weights as they load, with bitsandbytes (4bit: NF4 computing in --torch-dtype, "
                "bfloat16 under auto; 8bit: LLM.int8); needs a CUDA GPU and the [infer] extra (default: off)"),
    "attn_implementation": ({"choices": ["eager", "sdpa", "flash_attention_2"]},
                            "hf: attention kernel (default: the model's own; flash_attention_2 needs the flash-attn "
                            "package and a GPU)"),
}
_LIBRARY_NAME = {"cache": "cache_dir", "timeout": "timeout_s", "torch_dtype": "dtype"}
HF_LOADING = ("device_map", "torch_dtype", "load_in", "attn_implementation")
HF_LOADING_COMMANDS = ("judge", "scorecard")  # the commands that take HF_LOADING (added by build_parser)


def add_hf_loading(p) -> None:
    """The ``hf:`` loading options (:data:`HF_LOADING`: big checkpoints over several GPUs, in another dtype, in 4 or
    8 bits), in a group of their own."""
    add_runner_options(p.add_argument_group("runners: loading local models (hf)"), *HF_LOADING)


def add_runner_options(p, *names: str, role: str = "", **defaults) -> None:
    """The runner options ``names`` (dests, in this order), with this command's ``defaults``."""
    for name in names:
        options, text = _RUNNER[name]
        options = {**options, **({"default": defaults[name]} if name in defaults else {})}
        d = options.get("default")
        p.add_argument("--" + name.replace("_", "-"), **options,
                       help=text.format(d=f"{d:g}" if isinstance(d, float) else d, role=f" {role}" if role else ""))


def runner_kwargs(args: argparse.Namespace) -> dict:
    """The runner options this command took, as the library's keyword arguments."""
    kwargs = {_LIBRARY_NAME.get(n, n): getattr(args, n) for n in _RUNNER
              if hasattr(args, n) and n not in ("no_cache", "max_reply_mb")}
    if hasattr(args, "no_cache"):
        kwargs["use_cache"] = not args.no_cache
    if hasattr(args, "max_reply_mb"):
        if not 0 < args.max_reply_mb < float("inf"):  # checked here: the library sees bytes, not this flag
            from omniaudit.errors import InputError

            raise InputError("--max-reply-mb must be a finite number > 0", value=args.max_reply_mb)
        kwargs["max_reply_bytes"] = max(1, int(args.max_reply_mb * 2 ** 20))
    return kwargs


def add_sampling(p, title: str, temperature: float = 0.0, seed: int | None = None, runs: bool = True):
    """The sampling group (recorded in every predictions row); returns it for the command's runner options.
    ``runs=False``: no ``--runs`` (a command that decides its runs itself, such as the scorecard)."""
    g = p.add_argument_group(title)
    g.add_argument("--temperature", type=non_negative, default=temperature,
                   help=f"sampling temperature; 0 = greedy (default {temperature:g})")
    g.add_argument("--top-p", type=fraction, help="nucleus sampling mass (default: the model's / server's)")
    g.add_argument("--seed", type=non_negative_int, default=seed, help="sampling seed; run r uses SEED + r (default: "
                   + ("none sent; scripted:random uses 0)" if seed is None else f"{seed})"))
    if runs:
        g.add_argument("--runs", type=positive_int, default=1,
                       help="answers per item, e.g. 5 runs at --temperature 0.7 for a majority vote, 3 for a mean "
                            "over runs; rows carry their run index (default 1)")
    return g


def sampling_kwargs(args: argparse.Namespace) -> dict:
    return {"temperature": args.temperature, "top_p": args.top_p, "seed": args.seed, "runs": args.runs}
