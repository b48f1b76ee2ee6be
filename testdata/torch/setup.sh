#!/usr/bin/env bash
# Installs what testdata/torch/lm.py needs on Debian (12 "bookworm" or later), as root:
# PyTorch (python3-torch), NumPy, PyYAML, and OpenBLAS's OpenMP build, which PyTorch then
# multiplies with. Safe to run again: it returns at once when everything is there.
#
#   bash testdata/torch/setup.sh
set -euo pipefail
py=/usr/bin/python3
if "$py" -c 'import torch, numpy, yaml' 2>/dev/null &&
  dpkg-query -W -f '${Status}' libopenblas0-openmp 2>/dev/null | grep -q 'ok installed'; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "setup.sh: installing python3-torch needs root (run it with sudo)" >&2
  exit 1
fi
echo "setup.sh: installing python3-torch, python3-numpy, python3-yaml and libopenblas0-openmp from Debian ..." >&2
export DEBIAN_FRONTEND=noninteractive
wait_lock=(-o DPkg::Lock::Timeout=600) # wait for another apt-get instead of failing on its lock
apt-get "${wait_lock[@]}" update -qq
apt-get "${wait_lock[@]}" install -y -qq python3-torch python3-numpy python3-yaml libopenblas0-openmp >/dev/null
"$py" -c 'import torch, numpy, yaml; print("setup.sh: torch", torch.__version__, file=__import__("sys").stderr)'
