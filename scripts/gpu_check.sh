#!/usr/bin/env bash
# GPU smoke check, meant to take under 5 minutes on one GPU, offline, on the tiny random models (nothing downloaded):
#   1. omniaudit tiny-models                        (tiny omni thinker, causal LM, datasets)
#   2. a CPU reference judge run                    (CUDA hidden, float32)
#   3. hf: judge on the GPU: default placement (float32), --device-map auto --torch-dtype bfloat16 (text and
#      video+audio items), --load-in 4bit
#   4. the data-parallel judge: accelerate launch --num_processes <GPUs> -m omniaudit judge (one GPU: one process,
#      the launcher path only; the ranks' split and merge need two or more)
#   5. a 20-step DPO (tiny causal LM, LoRA) under DeepSpeed ZeRO-3 on one GPU (accelerate_configs/zero3.yaml, bf16)
#   6. omniaudit scorecard --size small with the tiny omni (needs espeak-ng for the protocol probes; skipped without)
# and prints per step: seconds, items/s, peak GPU memory (nvidia-smi, all processes on the GPUs, MiB) and how often
# the step's answers (the label field) agree with the CPU run of the same items.
#
#   scripts/gpu_check.sh                  # on a machine with a GPU and the [media,train] extras
#   GPU_CHECK_CPU=1 scripts/gpu_check.sh  # the same commands on CPU (device flags swapped, 4-bit skipped), to check
#                                         # the script itself on a machine without a GPU
# Environment: GPU_CHECK_ITEMS (text items judged, default 400), GPU_CHECK_DPO_STEPS (default 20),
# GPU_CHECK_SCORECARD=0 skips the scorecard, GPU_CHECK_KEEP=1 keeps the work folder, PYTHON (default
# .venv/bin/python, else python3).
# Exit status 1 when a step failed (its log's tail is printed); the summary table comes last.
#
#   scripts/gpu_check.sh --full [--dry-run] [--items N] [--steps N] [--keep]
# The full-size check instead (benchmarks/gpu_full.py; not yet run, 10-20 minutes on one H100 expected): the
# random-weight Qwen2.5-Omni-7B thinker from the shipped config (nothing downloaded) judged in bf16 and 10 ZeRO-3
# LoRA DPO steps, with memory and throughput; without a GPU it says it is skipped and exits 0; --dry-run checks the
# setup on any machine and prints the commands.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--full" ]; then
  shift
  py="${PYTHON:-}"
  if [ -z "$py" ]; then
    if [ -x .venv/bin/python ]; then py=.venv/bin/python; else py=python3; fi
  fi
  py=$(command -v "$py")
  py="$(cd "$(dirname "$py")" && pwd)/$(basename "$py")"  # absolute, the venv's own (not resolved past its link)
  exec "$py" benchmarks/gpu_full.py --python "$py" "$@"
fi

cpu_mode="${GPU_CHECK_CPU:-0}"
items="${GPU_CHECK_ITEMS:-400}"
dpo_steps="${GPU_CHECK_DPO_STEPS:-20}"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  if [ -x .venv/bin/python ]; then py=.venv/bin/python; else py=python3; fi
fi
py=$(command -v "$py")
bin=$(dirname "$py")
accelerate="$bin/accelerate"
[ -x "$accelerate" ] || {
  echo "error: accelerate not found beside $py: pip install 'omniaudit[train]' -c requirements/constraints.txt" >&2
  exit 2; }
"$py" -c "import torch, transformers, accelerate, trl, peft, deepspeed" 2>/dev/null || {
  echo "error: $py lacks the training stack: pip install -c requirements/constraints.txt -e '.[media,train]'" >&2
  exit 2; }

if [ "$cpu_mode" = "1" ]; then
  ngpu=0
else
  command -v nvidia-smi >/dev/null || {
    echo "error: no nvidia-smi: no GPU here (GPU_CHECK_CPU=1 runs the CPU parts)" >&2; exit 2; }
  ngpu=$(nvidia-smi -L | wc -l)
  [ "$ngpu" -ge 1 ] || { echo "error: nvidia-smi lists no GPU" >&2; exit 2; }
  "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" || {
    echo "error: torch sees no CUDA device (a CPU-only torch wheel?)" >&2; exit 2; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/omniaudit-gpu-check.XXXXXX")
cleanup() {
  [ -n "${sampler:-}" ] && kill "$sampler" 2>/dev/null || true
  if [ "${GPU_CHECK_KEEP:-0}" = "1" ]; then echo "work folder kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_HOME="$work/hf" WANDB_MODE=disabled TOKENIZERS_PARALLELISM=false
export HF_DATASETS_DISABLE_PROGRESS_BARS=1 HF_HUB_DISABLE_PROGRESS_BARS=1
unset WORLD_SIZE RANK LOCAL_RANK || true

free_port() { "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- measuring ------------------------------------------------------------------------------------------------------
rows=()      # "step|status|seconds|items|items/s|peak|agreement"
failed=0
sampler=""
start_sampler() {  # nvidia-smi every 100 ms, memory.used of each GPU (one line per GPU per sample)
  if [ "$ngpu" -gt 0 ]; then
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$work/mem.raw" 2>/dev/null &
    sampler=$!
  fi
}
stop_sampler() {  # sets peak: the largest sample's memory.used summed over the GPUs (MiB), or n/a
  peak="n/a"
  if [ -n "$sampler" ]; then
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    sampler=""
    peak=$(awk -v n="$ngpu" '{ s += $1; if (NR % n == 0) { if (s > m) m = s; s = 0 } } END { print (m ? m : "n/a") }' \
      "$work/mem.raw")
  fi
}
count() { [ -f "$1" ] && wc -l < "$1" | tr -d ' ' || echo 0; }
agree() {  # share of rows whose label matches the reference file's (same id, order, run), as a percentage
  "$py" - "$1" "$2" <<'EOF'
import json, sys
def labels(path):
    with open(path) as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return {(r["id"], r.get("order"), r.get("run")): r.get("label") for r in rows}
ref, got = labels(sys.argv[1]), labels(sys.argv[2])
shared = ref.keys() & got.keys()
same = sum(ref[k] == got[k] for k in shared)
print(f"{100 * same / len(shared):.1f}% ({same}/{len(shared)})" if shared else "no shared items")
EOF
}
# step NAME ITEMS_FILE REFERENCE_FILE -- COMMAND...: runs COMMAND (a program, not a shell function; its log in
# $work/NAME.log) and records a summary row: the rows of ITEMS_FILE per second, their agreement with REFERENCE_FILE.
step() {
  local name=$1 out=$2 ref=$3; shift 4
  echo ">> $name" >&2
  start_sampler
  local t0 t1 status=ok n rate peak agreement="-"
  t0=$(date +%s.%N)
  if ! timeout 600 "$@" > "$work/$name.log" 2>&1; then
    status=FAIL; failed=1
    echo "   failed; the end of $work/$name.log:" >&2
    tail -n 25 "$work/$name.log" | sed 's/^/   | /' >&2
  fi
  t1=$(date +%s.%N)
  stop_sampler
  local secs; secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  n="-"; rate="-"
  if [ "$out" != "-" ]; then
    n=$(count "$out")
    rate=$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%.1f", (s > 0 ? n / s : 0) }')
    if [ "$ref" != "-" ] && [ "$status" = ok ] && [ -f "$ref" ]; then agreement=$(agree "$ref" "$out"); fi
  fi
  rows+=("$name|$status|$secs|$n|$rate|$peak|$agreement")
}
notes=()
skip() { rows+=("$1|skipped|-|-|-|-|-"); notes+=("$1 skipped: $2"); echo ">> $1 skipped: $2" >&2; }

# --- the steps ------------------------------------------------------------------------------------------------------
tiny="$work/tiny"
omni="$tiny/omni"
text=(--dataset "$tiny/data/preference" --config judge --limit "$items")
media=(--dataset "$tiny/data/preference_media" --config judge --fps 2 --max-frames 4)
judge=("$py" -m omniaudit -q judge --judge "hf:$omni")
cpu_only=(env CUDA_VISIBLE_DEVICES=)  # torch sees no GPU

if [ "$cpu_mode" = "1" ]; then
  place=(--device-map cpu --torch-dtype bfloat16)  # the GPU run's flags, on CPU
  dp_config=accelerate_configs/cpu_2proc.yaml; dp_procs=2
  zero3=(--config_file accelerate_configs/zero3_cpu.yaml)
  dpo_precision=()                                  # the tiny recipe as it is: CPU, full precision
else
  place=(--device-map auto --torch-dtype bfloat16)
  dp_config=accelerate_configs/multi_gpu.yaml; dp_procs=$ngpu
  zero3=(--config_file accelerate_configs/zero3.yaml --num_processes 1)
  dpo_precision=(--bf16 true --use_cpu false)       # zero3.yaml runs bf16: the recipe must too
fi
gpu_note=$([ "$cpu_mode" = "1" ] && echo "cpu" || echo "gpu")
t_all=$(date +%s)

step tiny-models - - -- "$py" -m omniaudit -q tiny-models --out "$tiny"
[ -d "$omni" ] || { echo "error: tiny-models wrote no $omni" >&2; exit 1; }

step cpu-ref "$work/cpu.jsonl" - -- "${cpu_only[@]}" "${judge[@]}" "${text[@]}" --torch-dtype float32 \
  --out "$work/cpu.jsonl"
step cpu-ref-media "$work/cpu_media.jsonl" - -- "${cpu_only[@]}" "${judge[@]}" "${media[@]}" \
  --torch-dtype float32 --out "$work/cpu_media.jsonl"

if [ "$cpu_mode" = "1" ]; then
  step "$gpu_note-fp32" "$work/fp32.jsonl" "$work/cpu.jsonl" -- "${cpu_only[@]}" "${judge[@]}" "${text[@]}" \
    --out "$work/fp32.jsonl"
else
  step "$gpu_note-fp32" "$work/fp32.jsonl" "$work/cpu.jsonl" -- "${judge[@]}" "${text[@]}" --out "$work/fp32.jsonl"
fi
step "$gpu_note-bf16-auto" "$work/bf16.jsonl" "$work/cpu.jsonl" -- "${judge[@]}" "${text[@]}" "${place[@]}" \
  --out "$work/bf16.jsonl"
step "$gpu_note-bf16-media" "$work/bf16_media.jsonl" "$work/cpu_media.jsonl" -- "${judge[@]}" "${media[@]}" \
  "${place[@]}" --out "$work/bf16_media.jsonl"
if [ "$cpu_mode" = "1" ]; then
  skip gpu-4bit "bitsandbytes 4-bit needs CUDA"
else
  "$py" -c "import bitsandbytes" 2>/dev/null && \
    step gpu-4bit "$work/nf4.jsonl" "$work/cpu.jsonl" -- "${judge[@]}" "${text[@]}" --load-in 4bit \
      --torch-dtype bfloat16 --out "$work/nf4.jsonl" || skip gpu-4bit "bitsandbytes not installed"
fi

step "data-parallel-x$dp_procs" "$work/dp.jsonl" "$work/cpu.jsonl" -- env OMP_NUM_THREADS=1 \
  "$accelerate" launch --config_file "$dp_config" --num_processes "$dp_procs" --main_process_port "$(free_port)" \
  -m omniaudit -q judge --judge "hf:$omni" "${text[@]}" --out "$work/dp.jsonl"

dpo="dpo-zero3-${dpo_steps}steps"
step "$dpo" - - -- env TRANSFORMERS_VERBOSITY=info \
  "$accelerate" launch "${zero3[@]}" --main_process_port "$(free_port)" training/dpo.py \
  --config training/recipes/tiny/dpo.yaml --model_name_or_path "$tiny/causal_lm" --dataset_name "$tiny/data/chat" \
  --output_dir "$work/dpo" --max_steps "$dpo_steps" --save_strategy no --logging_steps 5 --report_to none \
  ${dpo_precision[@]+"${dpo_precision[@]}"}
# the Trainer's own steps/s (training only, not the launch) in the items/s column; ZeRO-3 seen partitioning the model
sps=$(sed -nE "s/.*train_steps_per_second'?: '?([0-9.]+).*/\1/p" "$work/$dpo.log" | tail -n 1)
last=$(( ${#rows[@]} - 1 ))
IFS='|' read -r a b c _ _ f g <<< "${rows[$last]}"
rows[$last]="$a|$b|$c|$dpo_steps steps|${sps:--} st/s|$f|$g"
if grep -q "activating zero.init" "$work/$dpo.log" 2>/dev/null; then zero3_seen=yes; else zero3_seen=no; fi

if [ "${GPU_CHECK_SCORECARD:-1}" = "0" ]; then
  skip scorecard-small "GPU_CHECK_SCORECARD=0"
elif command -v espeak-ng >/dev/null; then
  # exit 3: a model the calibration cannot vouch for (the random tiny omni); the card is still written
  step scorecard-small - - -- bash -c '"$@"; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 3 ]' _ \
    "$py" -m omniaudit -q scorecard --model "omni=hf:$omni" --size small --out "$work/card"
else
  skip scorecard-small "espeak-ng not installed (the protocol probes need it)"
fi
t_total=$(( $(date +%s) - t_all ))

# --- summary --------------------------------------------------------------------------------------------------------
echo
if [ "$cpu_mode" = "1" ]; then
  echo "omniaudit GPU check, CPU mode (GPU_CHECK_CPU=1): ${items} text items, ${t_total} s in all"
else
  echo "omniaudit GPU check on ${ngpu} GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c \
    | sed 's/^ *//' | paste -sd ';'), ${items} text items, ${t_total} s in all"
fi
fmt="%-20s %-8s %8s %9s %11s %9s  %s\n"
printf "$fmt" step status seconds items items/s "peak MiB" "labels = CPU run"
for row in "${rows[@]}"; do
  IFS='|' read -r a b c d e f g <<< "$row"
  printf "$fmt" "$a" "$b" "$c" "$d" "$e" "$f" "$g"
done
echo "ZeRO-3 partitioned the DPO model (zero.init): $zero3_seen"
for note in ${notes[@]+"${notes[@]}"}; do echo "$note"; done
echo "items/s: rows written / wall seconds of the whole command (model loading included), for the DPO the"
echo "Trainer's steps/s; peak MiB: nvidia-smi"
echo "memory.used summed over the GPUs (other processes included); bf16 and 4-bit answers may differ from the"
echo "float32 CPU run where the random tiny model is near a tie (its option probabilities are close to 0.5)."
exit "$failed"
