#!/usr/bin/env bash
# The container's start on the board: builds the TensorRT shim against the board's mounted TensorRT the first time
# (kept in the jetprof-shim volume that board/jetpack4/run.sh mounts), puts the lab's inputs the image keeps into a
# fresh checkout, then runs the command it was given.
set -euo pipefail
home=${JETPROF_HOME:-/opt/jetprof}
shim=${JETPROF_TRT_SHIM:-$home/native/build/libjetprof_trt.so}
if [ ! -f "$shim" ]; then
  if [ -e /usr/lib/aarch64-linux-gnu/libnvinfer.so.8 ]; then
    echo "jetprof: building the TensorRT shim against the board's TensorRT (once; about a minute on a Nano)" >&2
    (cd "$home" && npm run --silent build:trt) >&2 || echo "jetprof: the shim did not build (above); jetprof doctor says what is missing" >&2
  else
    echo "jetprof: no TensorRT mounted (--runtime nvidia missing?): jetprof doctor says which mount and the flag that fixes it" >&2
  fi
fi
# The lab's inputs, into a jetprof checkout that lacks them (a fresh clone is mounted at /work): the public weights
# fetched when the image was built and the sample video vtest.avi. Copied under a new private name, then renamed: a
# file already there is never replaced, and nothing planted at the name is written through.
if [ -f weights/yolov4-tiny.cfg ] && [ "$(realpath .)" != "$(realpath "$home")" ]; then
  for f in weights/yolov4-tiny.weights videos/vtest.avi; do
    if [ ! -e "$f" ] && [ ! -L "$f" ] && [ -f "$home/$f" ]; then
      mkdir -p "$(dirname "$f")"
      tmp=$(mktemp "$f.partial-XXXXXX")
      cp "$home/$f" "$tmp" && chmod 644 "$tmp" && mv -n "$tmp" "$f" && echo "jetprof: copied the image's $f here (once)" >&2
      [ -n "${JETPROF_OWNER:-}" ] && [ "$(id -u)" = 0 ] && chown -h "$JETPROF_OWNER" "$f" "$(dirname "$f")" 2>/dev/null
      rm -f "$tmp"
    fi
  done
  [ -e weights/yolov4-tiny.weights ] || echo "jetprof: no weights/yolov4-tiny.weights (the image was built offline): jetprof fetch-weights, or copy the file there" >&2
fi
# The files a command writes belong to the user who ran run.sh (JETPROF_OWNER, uid:gid): the command runs as that user,
# in the board's video group (the GPU's device nodes). nvprof's GPU counters on Tegra need root: a profile runs as
# root and what it wrote in this folder is given to the user when it ends (SIGTERM is passed on to it).
owner=${JETPROF_OWNER:-}
if [ -z "$owner" ] || [ "$(id -u)" != 0 ] || [ "${owner%%:*}" = 0 ]; then exec "$@"; fi
case " $* " in
  *" profile "*)
    marker=$(mktemp)
    # a second back: find's -newer is strictly newer, and a file written in the marker's own clock tick is the profile's
    touch -d "@$(($(date +%s) - 1))" "$marker"
    trap '' INT # Ctrl-C reaches the profile from the terminal; this shell waits for it to finish its files
    "$@" &
    child=$!
    trap 'kill -TERM $child 2>/dev/null' TERM
    code=0
    while :; do
      wait "$child" && code=0 || code=$?
      kill -0 "$child" 2>/dev/null || break
    done
    find . -xdev -newer "$marker" -uid 0 -exec chown -h "$owner" {} + 2>/dev/null || true
    rm -f "$marker"
    exit "$code"
    ;;
esac
exec setpriv --reuid="${owner%%:*}" --regid="${owner##*:}" --groups="${JETPROF_GROUPS:-44}" env HOME=/tmp "$@"
