#!/usr/bin/env bash
# Builds the JetPack 4 image (jetprof:jetpack4) from this checkout. BuildKit runs every step with runc, so the nvidia
# runtime, even when it is Docker's default on the board, mounts nothing into the build (files it would leave behind
# would clash with the mounts at run time). On the board it takes tens of minutes (the OpenCV binding compiles); on an x86
# machine with qemu-user-static: `PLATFORM=linux/arm64 bash board/jetpack4/build.sh`, slower.
set -euo pipefail
cd "$(dirname "$0")/../.."
IMAGE=${IMAGE:-jetprof:jetpack4}
platform=()
[ -n "${PLATFORM:-}" ] && platform=(--platform "$PLATFORM")
DOCKER_BUILDKIT=1 exec docker build "${platform[@]}" -t "$IMAGE" -f board/jetpack4/Dockerfile .
