#!/usr/bin/env bash
# Puts the real pedestrian video vtest.avi (768x576, 795 frames, from Debian's opencv-doc package) into videos/.
# Needs no install and no root: apt-get download + dpkg-deb -x.
set -euo pipefail
cd "$(dirname "$0")/.."
out=videos/vtest.avi
if [ -s "$out" ]; then echo "$out already present"; exit 0; fi
for tool in apt-get dpkg-deb; do
  command -v $tool >/dev/null || { echo "fetch-sample-video.sh: $tool not found; on a non-Debian system copy any mp4/avi into videos/ instead" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "==> downloading Debian's opencv-doc package (about 96 MB) for its sample video"
if ! (cd "$tmp" && apt-get download opencv-doc >/dev/null 2>"$tmp/err"); then
  echo "fetch-sample-video.sh: apt-get download opencv-doc failed: $(tail -1 "$tmp/err")" >&2
  echo "  run 'sudo apt-get update' first, or copy any mp4/avi into videos/ instead" >&2
  exit 1
fi
dpkg-deb --fsys-tarfile "$tmp"/opencv-doc_*.deb | tar -x -C "$tmp" ./usr/share/doc/opencv-doc/examples/data/vtest.avi
mkdir -p videos
mv "$tmp/usr/share/doc/opencv-doc/examples/data/vtest.avi" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
