#!/usr/bin/env bash
# Cross-fitted omni pairwise judge: EmoPrefer audit Table 1's omni rows out-of-fold (every pair judged by a judge that
# never trained on it). For each fold k: train judge k on the other folds (training/sft.py --heldout_fold k, the
# checkpoint with the best held-out WAF on k kept; OUT/foldk/heldout_selection.json names the step and its WAF), run
# it on fold k only (omniaudit judge --folds k), then join the K fold files into one judge (omniaudit
# merge-predictions) and audit it (omniaudit audit preference).
#
#   training/judge_folds.sh RECIPE DATASET OUT [training/sft.py overrides...]
#   training/judge_folds.sh training/recipes/qwen2.5-omni-7b/judge_cross_fit.yaml data/emoprefer_v2_media runs/omni_cv
#
# Environment: FOLDS (default "0 1 2 3 4", the preference builder's five folds; a subset audits only the pairs it
# covers, so pass AUDIT_ARGS=--judged-only), ACCELERATE_CONFIG (default accelerate_configs/zero3.yaml; on CPU
# accelerate_configs/cpu.yaml), FPS / MAX_FRAMES (what the judge sees at inference, default 1 / 12, as in training),
# AUDIT_ARGS (more `audit preference` options). Run from anywhere; `accelerate` and `omniaudit` must be on PATH.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
recipe=$1 dataset=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
launch=${ACCELERATE_CONFIG:-$here/../accelerate_configs/zero3.yaml}
files=()
for k in ${FOLDS:-0 1 2 3 4}; do
  accelerate launch --config_file "$launch" "$here/sft.py" --config "$recipe" --dataset_name "$dataset" \
    --heldout_fold "$k" --output_dir "$out/fold$k" "$@"
  omniaudit judge --dataset "$dataset" --config judge --judge "hf:$out/fold$k" --folds "$k" \
    --out "$out/fold$k.jsonl" --fps "${FPS:-1}" --max-frames "${MAX_FRAMES:-12}"
  files+=("$out/fold$k.jsonl")
done
omniaudit merge-predictions "${files[@]}" --out "$out/judge.jsonl"
# shellcheck disable=SC2086  # AUDIT_ARGS is a list of options
omniaudit audit preference --dataset "$dataset" --predictions "omni=$out/judge.jsonl" --out "$out/audit" \
  ${AUDIT_ARGS:-}
