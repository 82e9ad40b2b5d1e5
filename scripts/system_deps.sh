#!/usr/bin/env bash
# Debian packages the tests and the embedded speech set need: espeak-ng (offline TTS). Installed only if missing.
set -euo pipefail
missing=()
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo ">> installing Debian packages: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
