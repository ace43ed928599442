#!/usr/bin/env bash
# jetprof setup: system packages, npm dependencies, build. Idempotent; safe to run again.
#   bash scripts/setup.sh               OpenCV + ffmpeg (+ python3-opencv for the benchmark peer), npm ci, build
#   bash scripts/setup.sh --profilers   also Nsight Systems, nvprof and libnvToolsExt (Debian: from non-free)
#   bash scripts/setup.sh --test        everything the tests use: --profilers, Chromium (HTML report test), the sample video
#   bash scripts/setup.sh --deps        the system packages and npm dependencies only (needs package*.json, not the sources)
#   bash scripts/setup.sh --project     the build, the commands on PATH and the weights only (after a change of the sources)
# On JetPack (Jetson) it uses the OpenCV, CUDA, TensorRT and profilers JetPack ships.
set -euo pipefail
cd "$(dirname "$0")/.."

PROFILERS=0
TEST=0
DEPS=1
PROJECT=1
for arg in "$@"; do
  case "$arg" in
    --profilers) PROFILERS=1 ;;
    --test) PROFILERS=1; TEST=1 ;;
    --deps) PROJECT=0 ;;
    --project) DEPS=0 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

step() {
  local name="$1"; shift
  local t0=$SECONDS
  echo "==> $name"
  if ! "$@"; then
    echo "setup.sh: FAILED at step '$name' (command: $*). Fix the error above and run scripts/setup.sh again." >&2
    exit 1
  fi
  echo "    done in $((SECONDS - t0)) s"
}

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else echo "setup.sh: needs root or sudo for apt-get" >&2; exit 1; fi
fi
export DEBIAN_FRONTEND=noninteractive

. /etc/os-release 2>/dev/null || true
JETPACK=0
[ -f /etc/nv_tegra_release ] && JETPACK=1

need_node() {
  if [ $JETPACK = 1 ] && [ "$(ldd --version 2>/dev/null | head -1 | grep -o '[0-9.]*$')" = 2.27 ]; then
    # JetPack 4 (Ubuntu 18.04): official Node 20 builds and onnxruntime-node need glibc 2.28, NodeSource's too
    echo "JetPack 4 has glibc 2.27, which no Node 20 build runs on: use jetprof's container (bash board/jetpack4/build.sh, then bash board/jetpack4/run.sh; README: On a Jetson Nano)" >&2
    return 1
  fi
  command -v node >/dev/null || { echo "Node.js 20.19 or newer is required (https://nodejs.org; on JetPack 5 and 6 also NodeSource)" >&2; return 1; }
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
    || { echo "Node.js $(node --version) is too old: jetprof needs 20.19 or newer" >&2; return 1; }
}

apt_update() { $SUDO apt-get update -q; }

system_packages() {
  # make, g++ and python3: node-gyp builds the OpenCV binding (a minimal Debian or a fresh board root has neither)
  # GStreamer's appsrc, videoconvert (base), mp4mux (good), x264enc (ugly) and gst-inspect-1.0 (tools): the annotated
  # video's writer, which encodes each frame inside the write stage; h264parse (bad) and avdec_h264 (libav): the reader
  # of --video-io gstreamer (src/video/gstreamer.ts). On a Jetson JetPack adds the hardware's nvv4l2 elements.
  local pkgs=(ffmpeg build-essential python3 gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly
    gstreamer1.0-plugins-bad gstreamer1.0-libav gstreamer1.0-tools)
  if [ $JETPACK = 1 ] && [ -d /usr/include/opencv4 ]; then
    echo "    JetPack: using the OpenCV it ships ($(ls -d /usr/include/opencv4))"
  else
    pkgs+=(libopencv-dev)
  fi
  command -v /usr/bin/python3 >/dev/null && pkgs+=(python3-opencv)
  $SUDO apt-get install -y -q --no-install-recommends "${pkgs[@]}"
}

enable_debian_nonfree() {
  # NVIDIA's profilers live in Debian's non-free component; the stock sources list only main.
  local f=/etc/apt/sources.list.d/jetprof-nonfree.sources
  if [ ! -f "$f" ]; then
    $SUDO tee "$f" >/dev/null <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: ${VERSION_CODENAME:-bookworm} ${VERSION_CODENAME:-bookworm}-updates
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  $SUDO apt-get update -q
}

profiler_packages() {
  if [ $JETPACK = 1 ]; then
    echo "    JetPack: nvprof (JetPack 4) and nsys come with JetPack / Nsight Systems for L4T; nothing to install"
    return 0
  fi
  if [ "${ID:-}" = debian ]; then
    enable_debian_nonfree
    $SUDO apt-get install -y -q --no-install-recommends nvidia-profiler nsight-systems-target nsight-systems libnvtoolsext1
  elif [ "${ID:-}" = ubuntu ]; then
    $SUDO apt-get install -y -q --no-install-recommends nvidia-profiler nsight-systems-target nsight-systems libnvtoolsext1 \
      || { echo "    enable 'multiverse' (sudo add-apt-repository multiverse) for NVIDIA's profilers" >&2; return 1; }
  else
    echo "    unknown distribution '${ID:-?}': install nsys / nvprof from NVIDIA yourself" >&2
  fi
}

stream_test_packages() {
  # The RTSP test serves a clip on 127.0.0.1 with GStreamer's RTSP server (test/helpers/rtsp_server.py) and reads
  # a GStreamer pipeline; tegrastats' test replays lines through bash (nothing else needed). GStreamer's headers build
  # the board's stand-in elements (test/native/gst_board_elements.c: nvv4l2decoder, nvvidconv, nvv4l2h264enc).
  $SUDO apt-get install -y -q --no-install-recommends python3-gi gir1.2-gstreamer-1.0 gir1.2-gst-rtsp-server-1.0 \
    gstreamer1.0-plugins-base gstreamer1.0-plugins-good libgstreamer1.0-dev pkg-config
}

browser_packages() {
  # Debian's chromium, driven headless by playwright-core in the HTML report test (no browser download).
  if [ "${ID:-}" = debian ]; then
    $SUDO apt-get install -y -q --no-install-recommends chromium
  else
    $SUDO apt-get install -y -q --no-install-recommends chromium || $SUDO apt-get install -y -q --no-install-recommends chromium-browser \
      || { echo "    no Chromium package: the HTML report test will be skipped" >&2; return 0; }
  fi
}

npm_install() {
  # Skipped when node_modules was installed by this script from the same package-lock.json with the same Node (the
  # OpenCV binding takes minutes to build). opencv4nodejs must build against the system OpenCV, not download its own;
  # onnxruntime-node's install script would download CUDA providers that this project does not use.
  local stamp=node_modules/.jetprof-installed
  local want
  want="$(sha256sum package-lock.json | cut -d' ' -f1) node $(node --version)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && native_modules_load 2>/dev/null; then
    echo "    node_modules already matches package-lock.json and Node $(node --version): npm ci skipped"
    return 0
  fi
  # package.json's allowScripts approves the five install scripts this needs (npm 11 warns about unapproved ones, and
  # npm 12 skips them: the binding would then be missing, which native_modules_load below says)
  local shadow rc=0
  shadow=$(opencv_module_shadow)
  OPENCV_INCLUDE_DIR=$shadow ONNXRUNTIME_NODE_INSTALL=skip OPENCV4NODEJS_DISABLE_AUTOBUILD=1 JOBS=max \
    npm ci --no-audit --no-fund || rc=1
  [ -n "$shadow" ] && rm -rf "$(dirname "$shadow")"
  [ $rc = 0 ] || return 1
  native_modules_load || return 1
  echo "$want" > "$stamp"
}

# The OpenCV binding compiles a C++ wrapper for each module the system's OpenCV lists in opencv2/opencv_modules.hpp
# (Debian's lists 55, contrib included); jetprof uses six. A shadow of the include folder whose list holds only those
# (every other header a link to the real one) makes the binding compile just them: a quicker build and half the
# binary (docs/MEASUREMENTS.md). Prints the shadow's opencv4 folder, or nothing where OpenCV is not laid out as usual.
OPENCV_MODULES='CORE|IMGPROC|IMGCODECS|VIDEOIO|HIGHGUI|DNN'
opencv_module_shadow() {
  local inc=/usr/include/opencv4 dir entry
  [ -f "$inc/opencv2/opencv_modules.hpp" ] || return 0
  dir=$(mktemp -d -t jetprof-opencv-include-XXXXXX) || return 0
  mkdir -p "$dir/opencv4/opencv2"
  for entry in "$inc"/opencv2/*; do
    [ "$(basename "$entry")" = opencv_modules.hpp ] || ln -s "$entry" "$dir/opencv4/opencv2/"
  done
  sed -E "/^#define HAVE_OPENCV_($OPENCV_MODULES)\$/b; /^#define HAVE_OPENCV_/d" "$inc/opencv2/opencv_modules.hpp" \
    > "$dir/opencv4/opencv2/opencv_modules.hpp"
  echo "$dir/opencv4"
}

native_modules_load() {
  # Each native module must load: an install script that did not run (blocked, or failed quietly) leaves a package
  # without its binary, and nothing else would say so until infer fails.
  local failed=0 name code
  for name in @u4/opencv4nodejs onnxruntime-node koffi; do
    code="require('$name')"
    [ "$name" = @u4/opencv4nodejs ] && code="require('@u4/opencv-build').Log.silence = true; $code"
    if ! out=$(node -e "$code" 2>&1 >/dev/null); then
      echo "    $name does not load: $(printf '%s' "$out" | grep -m1 -E 'Error|error' || printf '%s' "$out" | head -1) (fix: npm rebuild $name; its install script must be approved in package.json allowScripts)" >&2
      failed=1
    fi
  done
  return $failed
}

step "check Node.js" need_node
if [ $DEPS = 1 ]; then
  step "apt-get update" apt_update
  step "system packages (OpenCV, ffmpeg)" system_packages
  [ $PROFILERS = 1 ] && step "profilers (nsys, nvprof, libnvToolsExt)" profiler_packages
  [ $TEST = 1 ] && step "Chromium (HTML report test)" browser_packages
  [ $TEST = 1 ] && step "GStreamer RTSP server and plugins (live-source tests)" stream_test_packages
  step "npm ci (builds the OpenCV binding: about 4 min on 2 cores; skipped when node_modules is current)" npm_install
fi
if [ $PROJECT = 0 ]; then echo "setup.sh: dependencies ready (--deps); the sources are built by: bash scripts/setup.sh --project"; exit 0; fi
step "build (TypeScript -> dist/)" npm run build --silent

commands_on_path() {
  # The README's commands as written (jetprof, infer, infer-onnx, infer-trt, infer-opencv): small wrappers in
  # /usr/local/bin (root) or ~/.local/bin (a user), each running this checkout's dist/.
  local bin=/usr/local/bin
  [ "$(id -u)" = 0 ] || bin="$HOME/.local/bin"
  mkdir -p "$bin"
  local name
  for name in jetprof infer infer-onnx infer-trt infer-opencv; do
    printf '#!/bin/sh\n# jetprof (%s): written by scripts/setup.sh\nexec node "%s/dist/src/cli/%s.js" "$@"\n' "$PWD" "$PWD" "$name" > "$bin/$name.tmp"
    chmod 755 "$bin/$name.tmp" && mv "$bin/$name.tmp" "$bin/$name"
  done
  case ":$PATH:" in
    *":$bin:"*) echo "    jetprof, infer, infer-onnx, infer-trt, infer-opencv are in $bin" ;;
    *) echo "    jetprof, infer, ... are in $bin, which is not on your PATH: add it (export PATH=\"$bin:\$PATH\") or log in again" ;;
  esac
}
step "commands on PATH (jetprof, infer, ...)" commands_on_path

real_weights() {
  # The public YOLOv4-Tiny weights (AlexeyAB/darknet release), checked against weights/yolov4-tiny.cfg and written
  # whole or not at all. Offline (as on machines without internet) the demo uses seeded random weights instead.
  if node dist/src/cli/jetprof.js fetch-weights --timeout 300 --idle-timeout 20 >/dev/null; then return 0; fi
  echo "    no internet here (or the download failed, said above): the demo will use seeded RANDOM weights; copy yolov4-tiny.weights to weights/ for real boxes"
}
step "real YOLOv4-Tiny weights (download, checked against the cfg)" real_weights
[ $TEST = 1 ] && step "sample video (videos/vtest.avi)" bash scripts/fetch-sample-video.sh
echo "setup.sh: ready. Try: bash scripts/demo.sh"
