#!/usr/bin/env bash
# Builds native/build/libjetprof_trt.so, jetprof's C ABI over TensorRT (npm run build:trt).
# Finds TensorRT and CUDA where JetPack puts them (/usr/include/aarch64-linux-gnu, /usr/lib/aarch64-linux-gnu,
# /usr/local/cuda), or under TENSORRT_ROOT and CUDA_HOME (TensorRT tar packages: include/ and lib/).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "build-trt-shim: $*" >&2; exit 2; }

CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
arch="$(uname -m)-linux-gnu"
trt_inc="" trt_lib=""
for root in "${TENSORRT_ROOT:-}" /usr/local/tensorrt /usr; do
  [ -n "$root" ] || continue
  for inc in "$root/include" "$root/include/$arch"; do
    [ -f "$inc/NvInfer.h" ] && { trt_inc="$inc"; break; }
  done
  for lib in "$root/lib" "$root/lib/$arch" "$root/lib64" "$root/targets/$(uname -m)-linux/lib"; do
    ls "$lib"/libnvinfer.so* >/dev/null 2>&1 && { trt_lib="$lib"; break; }
  done
  [ -n "$trt_inc" ] && [ -n "$trt_lib" ] && break
  trt_inc="" trt_lib=""
done
[ -n "$trt_inc" ] || die "TensorRT headers (NvInfer.h) not found: run on JetPack (apt install nvidia-tensorrt-dev / tensorrt) or set TENSORRT_ROOT"
[ -f "$CUDA_HOME/include/cuda_runtime_api.h" ] || die "CUDA headers not found in $CUDA_HOME/include: set CUDA_HOME"
cuda_lib="$CUDA_HOME/lib64"
[ -d "$cuda_lib" ] || cuda_lib="$CUDA_HOME/targets/$(uname -m)-linux/lib"

version=$(awk '/define NV_TENSORRT_(MAJOR|MINOR|PATCH) /{printf "%s.", $3}' "$trt_inc/NvInferVersion.h" | sed 's/\.$//')
echo "build-trt-shim: TensorRT ${version:-?} headers in $trt_inc, libraries in $trt_lib; CUDA in $CUDA_HOME"
mkdir -p native/build
g++ -std=c++17 -O2 -fPIC -shared -Wall -Wextra \
  -Inative -isystem "$trt_inc" -isystem "$CUDA_HOME/include" \
  native/trt_shim.cpp -o native/build/libjetprof_trt.so.tmp \
  -L"$trt_lib" -L"$cuda_lib" -Wl,-rpath,"$trt_lib:$cuda_lib" \
  -lnvinfer -lnvinfer_plugin -lcudart -ldl
mv native/build/libjetprof_trt.so.tmp native/build/libjetprof_trt.so
echo "build-trt-shim: wrote native/build/libjetprof_trt.so"
