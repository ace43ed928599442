#!/usr/bin/env bash
# Runs jetprof's JetPack 4 image on the board with what the NVIDIA container runtime needs to mount the board's CUDA,
# TensorRT, Tegra libraries and GStreamer plugins, and what jetprof reads of the board (docs/JETPACK4.md says why
# each flag). The current folder is /work inside (videos, weights, engines and runs stay on the board's disk).
#   bash board/jetpack4/run.sh                               jetprof doctor
#   bash board/jetpack4/run.sh jetprof selftest --out-dir runs/selftest
#   bash board/jetpack4/run.sh infer-trt videos/vtest.avi --engine engines/yolov4-tiny.trt --frame-size 960x540
#   bash board/jetpack4/run.sh --print jetprof doctor        the docker command, not run
# Needs root or the docker group (sudo bash board/jetpack4/run.sh ...).
set -euo pipefail
IMAGE=${IMAGE:-jetprof:jetpack4}
PRINT=0
if [ "${1:-}" = --print ]; then PRINT=1; shift; fi
[ $# -gt 0 ] || set -- jetprof doctor
# JETPROF_REHEARSE=1: no docker: the command runs through the container's entrypoint on this machine, in this folder
# (the documented route's rehearsal in CI, test/board-route.test.ts, with stand-ins for what only a board has)
if [ "${JETPROF_REHEARSE:-}" = 1 ] && [ $PRINT = 0 ]; then exec bash "$(dirname "$0")/entrypoint.sh" "$@"; fi

args=(run --rm --runtime nvidia -e NVIDIA_VISIBLE_DEVICES=all -e NVIDIA_DRIVER_CAPABILITIES=all --network host --ipc=host)
# nvidia-container-toolkit 1.9 and later mounts only l4t.csv, drivers.csv and devices.csv unless asked for all of them
# (CUDA and TensorRT are in cuda.csv and tensorrt.csv); JetPack 4.6's own 1.7.0 mounts all of them anyway
cli=$(nvidia-container-cli -V 2>/dev/null | sed -n 's/^cli-version: *//p' | head -1 || true)
if [ -n "$cli" ] && [ "$(printf '%s\n' 1.9.0 "$cli" | sort -V | head -1)" = 1.9.0 ]; then
  args+=(-e NVIDIA_REQUIRE_JETPACK=csv-mounts=all)
fi
# cameras: USB or CSI through V4L2 as devices; CSI through nvarguscamerasrc needs the host's Argus daemon's socket
for dev in /dev/video*; do [ -e "$dev" ] && args+=(--device "$dev"); done
[ -S /tmp/argus_socket ] && args+=(-v /tmp/argus_socket:/tmp/argus_socket)
# what jetprof reads of the board: the L4T release, the model (/proc cannot be mounted into a container: a copy),
# tegrastats and the power mode's tool (on no CSV list)
[ -f /etc/nv_tegra_release ] && args+=(-v /etc/nv_tegra_release:/etc/nv_tegra_release:ro)
# (passed as a variable: no file at a name another user of the board could plant)
[ -r /proc/device-tree/model ] && args+=(-e "JETPROF_BOARD_MODEL=$(tr -d '\0' </proc/device-tree/model)")
for tool in /usr/bin/tegrastats /usr/sbin/nvpmodel /etc/nvpmodel.conf; do
  [ -e "$tool" ] && args+=(-v "$tool:$tool:ro")
done
# nvprof's GPU counters on Tegra need root and, in a container, SYS_ADMIN
args+=(--cap-add SYS_ADMIN)
# what the commands write in your folder is yours (the user behind sudo), not root's; the GPU's device nodes belong
# to the board's video group
args+=(-e "JETPROF_OWNER=${SUDO_UID:-$(id -u)}:${SUDO_GID:-$(id -g)}" -e "JETPROF_GROUPS=$(getent group video | cut -d: -f3 || true)")
# your folder as /work: --mount, whose source is one quoted field (-v splits a path holding ':' in two)
args+=(--mount "type=bind,\"source=${PWD//\"/\"\"}\",target=/work" -w /work -v jetprof-shim:/opt/jetprof/native/build)
[ -t 0 ] && [ -t 1 ] && args+=(-it)
args+=("$IMAGE" "$@")
if [ $PRINT = 1 ]; then
  printf 'docker'
  printf ' %q' "${args[@]}"
  printf '\n'
  exit 0
fi
exec docker "${args[@]}"
