#!/usr/bin/env bash
# Provisions jetprof's userland for JetPack 4.x boards (Jetson Nano, TX2, Xavier on L4T r32) on Debian 11: glibc 2.31
# (Node 20 and onnxruntime-node need 2.28; JetPack 4.6 has 2.27), OpenCV 4.5.1 (imports YOLOv4-Tiny; Ubuntu 20.04's
# 4.2 cannot) and GStreamer 1.18. The image recipe (board/jetpack4/Dockerfile) runs it, and so does
# `SUITE=bullseye bash scripts/check-arm64.sh` on an arm64 Debian 11 root under qemu, so what the image gets is checked
# without a board. Needs root and Node 20.19+ on PATH; run from anywhere.
#   provision.sh             everything (the qemu check)
#   provision.sh --deps      what a change of the sources does not touch: packages, npm dependencies, the sample video
#                            (the image's first layer, from package*.json and the scripts alone)
#   provision.sh --project   the build, the commands on PATH, the weights (the image's layer after COPY . .)
#
# Nothing from CUDA, cuDNN, TensorRT or nvidia-l4t-* is installed: on the board the NVIDIA container runtime mounts
# them from the host (board/jetpack4/csv-mounts.txt), and a file of the image at a mounted path makes the container
# fail to start ("file exists"). The TensorRT shim is built at the first start on the board, against the mounted
# headers and libraries (board/jetpack4/entrypoint.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
export DEBIAN_FRONTEND=noninteractive
phase=${1:-}
if [ "$phase" = --project ]; then
  bash scripts/setup.sh --project
  echo "provision.sh: done (--project)"
  exit 0
fi
. /etc/os-release
[ "${VERSION_ID:-}" = 11 ] || echo "provision.sh: written for Debian 11 (bullseye), this is ${PRETTY_NAME:-unknown}" >&2

echo "==> packages the board's mounted libraries need in the image (EGL dispatch, kmod for the nvv4l2 elements)"
apt-get update -q
# libglvnd0/libegl1: NVIDIA's EGL (mounted in tegra-egl) loads through glvnd; kmod: lsmod, which nvv4l2decoder calls
apt-get install -y -q --no-install-recommends ca-certificates kmod libegl1 libgles2 libglvnd0 pkg-config git

echo "==> where the mounted libraries are found"
# the runtime mounts /usr/local/cuda-10.2 but not the /usr/local/cuda link the shim's build looks for
[ -e /usr/local/cuda ] || [ -L /usr/local/cuda ] || ln -s cuda-10.2 /usr/local/cuda
printf '%s\n' /usr/lib/aarch64-linux-gnu/tegra /usr/lib/aarch64-linux-gnu/tegra-egl >/etc/ld.so.conf.d/nvidia-tegra.conf
echo /usr/local/cuda-10.2/targets/aarch64-linux/lib >/etc/ld.so.conf.d/cuda-10-2.conf
# NVIDIA's EGL vendor file, not mesa's (glvnd takes the lowest number)
mkdir -p /usr/share/glvnd/egl_vendor.d
rm -f /usr/share/glvnd/egl_vendor.d/50_mesa.json
echo '{"file_format_version":"1.0.0","ICD":{"library_path":"libEGL_nvidia.so.0"}}' \
  >/usr/share/glvnd/egl_vendor.d/10_nvidia.json

echo "==> jetprof: OpenCV, GStreamer, ffmpeg, npm ci, build, commands on PATH (scripts/setup.sh)"
# Debian 11's OpenCV 4.5.1 has already moved the legacy trackers into cv::legacy, where @u4/opencv4nodejs 7.1.2 looks
# for them only from 4.5.2 on, so its tracking module does not compile (found by the qemu check). jetprof uses none
# of it. The binding compiles a module when opencv2/opencv_modules.hpp defines HAVE_OPENCV_<MODULE>: it is shown a
# copy of OpenCV's headers (links, one file copied) whose opencv_modules.hpp leaves tracking out.
apt-get install -y -q --no-install-recommends libopencv-dev
if dpkg-query -W -f='${Version}' libopencv-dev 2>/dev/null | grep -q '^4\.5\.[01]'; then
  inc=/opt/jetprof-opencv-include
  rm -rf "$inc" && mkdir -p "$inc/opencv2"
  for entry in /usr/include/opencv4/opencv2/*; do
    [ "$(basename "$entry")" = opencv_modules.hpp ] || ln -s "$entry" "$inc/opencv2/"
  done
  grep -v '^#define HAVE_OPENCV_TRACKING$' /usr/include/opencv4/opencv2/opencv_modules.hpp >"$inc/opencv2/opencv_modules.hpp"
  export OPENCV_INCLUDE_DIR=$inc
fi
bash scripts/setup.sh $phase
# onnxruntime-node carries every platform's library (darwin and win32: 220 MB of its 288); this image loads linux's own
rm -rf node_modules/onnxruntime-node/bin/napi-v*/darwin node_modules/onnxruntime-node/bin/napi-v*/win32
find node_modules/onnxruntime-node/bin -mindepth 3 -maxdepth 3 -path '*/linux/*' ! -name "$(node -p 'process.arch')" -exec rm -rf {} +
# the lab's sample video, kept in the image (8 MB): the entrypoint copies it and the weights setup.sh fetched into a
# fresh checkout at its first start, so the documented route finds videos/vtest.avi and weights/yolov4-tiny.weights
bash scripts/fetch-sample-video.sh || echo "provision.sh: no sample video in the image (above); the route then needs one copied to videos/vtest.avi" >&2
# doctor reads this: it then checks the mounts a JetPack 4 container needs (src/platform/board.ts CONTAINER_PATHS)
echo jetpack4 >/etc/jetprof-container
# what a board's own apt would drop in the way of a mount is checked by scripts/check-arm64.sh (SUITE=bullseye)
echo "provision.sh: done"
