#!/usr/bin/env bash
# The main job on a real video: YOLOv4-Tiny through ONNX Runtime on vtest.avi (frames resized to 960x540 as in
# the lab), writing runs/vtest-onnx-detected.mp4 and runs/vtest-onnx.json, and printing the lab's table row.
# Uses weights/yolov4-tiny.weights when you have put the real ones there (see README); otherwise it makes
# seeded RANDOM weights: the timings are real, the boxes are not.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/src/cli/infer.js ] || { echo "demo.sh: run scripts/setup.sh first (dist/ is missing)" >&2; exit 1; }
bash scripts/fetch-sample-video.sh
cfg=weights/yolov4-tiny.cfg
weights=weights/yolov4-tiny.weights
if [ ! -f "$weights" ]; then
  weights=weights/yolov4-tiny-random.weights
  [ -f "$weights" ] || node dist/src/cli/jetprof.js make-weights --cfg "$cfg" --seed 1 --out "$weights" >/dev/null
  echo "demo.sh: NOTE: no weights/yolov4-tiny.weights, using RANDOM weights ($weights): FPS is real, detections are meaningless"
fi
mkdir -p runs
node dist/src/cli/infer.js videos/vtest.avi --cfg "$cfg" --weights "$weights" --frame-size 960x540 \
  --output runs/vtest-onnx-detected.mp4 --json runs/vtest-onnx.json "$@"
