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
# Docker 23 and later build with BuildKit only through the buildx plugin (DOCKER_BUILDKIT=1 without it fails with
# "BuildKit is enabled but the buildx component is missing or broken"); JetPack 4's docker.io 20.10 has it built in
if ! docker buildx version >/dev/null 2>&1; then
  server=$(docker version --format '{{.Server.Version}}' 2>/dev/null || true)
  if [ "${server%%.*}" -ge 23 ] 2>/dev/null; then
    echo "build.sh: Docker $server needs the buildx plugin for BuildKit, and it is missing: sudo apt-get install docker-buildx (Ubuntu's docker.io) or docker-buildx-plugin (Docker's own packages), then run this again" >&2
    exit 1
  fi
fi
DOCKER_BUILDKIT=1 exec docker build "${platform[@]}" -t "$IMAGE" -f board/jetpack4/Dockerfile .
