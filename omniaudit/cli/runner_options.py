"""The runner and sampling flags every command that asks a model shares, defined once with their defaults and
wording (set per command), and turned into the runners' keyword arguments."""

from __future__ import annotations

import argparse

from omniaudit.cli.numbers import fraction, integer, non_negative, non_negative_int, positive, positive_int


# ------------------------------------------------------------------------------------------------- runner options
def device_map(text: str) -> str:
    """``--device-map``: auto, balanced, sequential, cpu or cuda:N."""
    from omniaudit.runners.hf_loading import DEVICE_MAPS, is_device_map

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
    "enable_thinking": ({"action": argparse.BooleanOptionalAction, "default": None},
                        "reasoning models (Qwen3, DeepSeek-R1 style chat templates): switch the template's thinking "
                        "on or off (hf: enable_thinking to the chat template, needs --mode generate; openai: "
                        "chat_template_kwargs, which vLLM, SGLang and transformers serve pass on). On, --max-tokens "
                        "is raised to at least 4096. The trace (<think>...</think>, a server's reasoning_content) is "
                        "set apart and never read as the answer; a reply whose only answer is in it is unread "
                        "(reasoning-only). Default: the template's own"),
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
    # hf: how a big checkpoint is loaded (omniaudit.runners.hf_loading); recorded in the provenance only when given
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
