#!/usr/bin/env bash
# Installs everything aotnn and its tests need on a fresh Debian machine with Python 3.10+.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
if ! command -v cc >/dev/null; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq gcc >/dev/null
fi
python3 -m pip install -q --upgrade pip
python3 -m pip install -q -e ./runtime -e ".[test,tune]"
