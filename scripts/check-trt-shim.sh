#!/usr/bin/env bash
# Compile-checks native/trt_shim.cpp against TensorRT's public headers without TensorRT installed.
#   scripts/check-trt-shim.sh DIR...   each DIR holds a TensorRT include/ folder (NvInfer.h ...)
# The headers come from github.com/NVIDIA/TensorRT (never commit them), e.g.:
#   git clone --bare https://github.com/NVIDIA/TensorRT /tmp/TensorRT.git
#   for t in 8.2.1 v8.6.1 v10.3.0; do mkdir -p /tmp/trt-headers/$t; git --git-dir=/tmp/TensorRT.git archive $t include | tar -x -C /tmp/trt-headers/$t; done
#   scripts/check-trt-shim.sh /tmp/trt-headers/*
set -euo pipefail
cd "$(dirname "$0")/.."
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
[ $# -gt 0 ] || { echo "usage: scripts/check-trt-shim.sh DIR... (each with include/NvInfer.h)" >&2; exit 2; }
[ -f "$CUDA_HOME/include/cuda_runtime_api.h" ] || { echo "check-trt-shim: CUDA headers not found in $CUDA_HOME/include: set CUDA_HOME" >&2; exit 2; }
status=0
for dir in "$@"; do
  inc="$dir/include"; [ -f "$inc/NvInfer.h" ] || inc="$dir"
  version=$(awk '/define (NV_TENSORRT|TRT)_(MAJOR|MINOR|PATCH)(_ENTERPRISE)? [0-9]/{printf "%s.", $3}' "$inc/NvInferVersion.h" | sed 's/\.$//')
  if g++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -Inative -isystem "$inc" -isystem "$CUDA_HOME/include" native/trt_shim.cpp; then
    echo "ok      TensorRT $version ($inc)"
  else
    echo "FAILED  TensorRT $version ($inc)"; status=1
  fi
done
exit $status
