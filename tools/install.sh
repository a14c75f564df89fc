#!/usr/bin/env bash
# Installs everything aotnn and its tests need on a fresh Debian machine with Python 3.10+.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO="sudo"; fi
# A C compiler (kernel libraries are linked with it), the aarch64 and armv7a cross compilers and
# qemu-user (bundles for ARM boards are built and run in the tests), the bare-metal Arm compiler
# with newlib and qemu-system-arm (Cortex-M bundles run on QEMU's MPS2/MPS3 boards in the tests), and Mesa's CPU Vulkan driver
# (lavapipe) with the Vulkan loader: the Vulkan tests run on it when there is no GPU; Open MPI
# (data-parallel training runs over it through mpi4py; the tests launch two ranks with mpirun).
DEBS="gcc make gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf qemu-user gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm mesa-vulkan-drivers libvulkan1 openmpi-bin libopenmpi-dev"
missing=""
for deb in $DEBS; do dpkg -s "$deb" >/dev/null 2>&1 || missing="$missing $deb"; done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
python3 -m pip install -q --upgrade pip
python3 -m pip install -q -e "./runtime[vulkan]" -e ".[test,tune,cuda,distributed]"
# MindSpore's model zoos (vision, audio), for the tests that run their models unmodified through aotnn's aliases:
# without their dependencies (they name MindSpore itself, which aotnn stands in for)
python3 -m pip install -q --no-deps mindcv==0.3.0 mindaudio==0.3.0
