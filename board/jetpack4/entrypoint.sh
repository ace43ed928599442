#!/usr/bin/env bash
# The container's start on the board: builds the TensorRT shim against the board's mounted TensorRT the first time
# (kept in the jetprof-shim volume that board/jetpack4/run.sh mounts), then runs the command it was given.
set -euo pipefail
shim=/opt/jetprof/native/build/libjetprof_trt.so
if [ ! -f "$shim" ]; then
  if [ -e /usr/lib/aarch64-linux-gnu/libnvinfer.so.8 ]; then
    echo "jetprof: building the TensorRT shim against the board's TensorRT (once; about a minute on a Nano)" >&2
    (cd /opt/jetprof && npm run --silent build:trt) >&2 || echo "jetprof: the shim did not build (above); jetprof doctor says what is missing" >&2
  else
    echo "jetprof: no TensorRT mounted (--runtime nvidia missing?): jetprof doctor says which mount and the flag that fixes it" >&2
  fi
fi
exec "$@"
