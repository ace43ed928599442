#!/usr/bin/python3
"""The Python peer for `npm run bench`: YOLOv4-Tiny on a video with the lab's structure, one frame at a time:
cv2.VideoCapture -> resize -> cv2.dnn (darknet cfg + weights) -> decode -> NMSBoxes -> draw -> cv2.VideoWriter.
Runs on Debian's python3-opencv. Prints one JSON line: frames, wall time and inference time (warm-up excluded).

usage: peer_lab.py CFG WEIGHTS VIDEO OUT.mp4 --frame-size 960x540 --max-frames N --warmup 5 --conf 0.3 --nms 0.5 --threads N
"""
import argparse
import json
import time

import cv2
import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cfg")
    p.add_argument("weights")
    p.add_argument("video")
    p.add_argument("out")
    p.add_argument("--frame-size", default="960x540")
    p.add_argument("--max-frames", type=int, default=0)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--conf", type=float, default=0.3)
    p.add_argument("--nms", type=float, default=0.5)
    p.add_argument("--threads", type=int, default=0)
    a = p.parse_args()
    if a.threads:
        cv2.setNumThreads(a.threads)
    w, h = (int(v) for v in a.frame_size.split("x"))
    net = cv2.dnn.readNetFromDarknet(a.cfg, a.weights)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
    out_names = net.getUnconnectedOutLayersNames()
    size = (416, 416)
    for line in open(a.cfg):
        if line.startswith("width="):
            size = (int(line.split("=")[1]), size[1])
        if line.startswith("height="):
            size = (size[0], int(line.split("=")[1]))
    cap = cv2.VideoCapture(a.video)
    fps = cap.get(cv2.CAP_PROP_FPS) or 30
    writer = cv2.VideoWriter(a.out, cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    frames = 0
    measured = 0
    infer_s = 0.0
    start = None
    end = None
    while True:
        if a.max_frames and frames >= a.max_frames:
            break
        t0 = time.perf_counter()
        ok, frame = cap.read()
        if not ok:
            break
        frame = cv2.resize(frame, (w, h))
        blob = cv2.dnn.blobFromImage(frame, 1 / 255.0, size, swapRB=True, crop=False)
        t1 = time.perf_counter()
        net.setInput(blob)
        outs = net.forward(out_names)
        t2 = time.perf_counter()
        boxes, scores, classes = [], [], []
        for out in outs:
            for row in out:
                cls_scores = row[5:]
                c = int(np.argmax(cls_scores))
                score = float(cls_scores[c])
                if score > a.conf:
                    cx, cy, bw, bh = row[0] * w, row[1] * h, row[2] * w, row[3] * h
                    boxes.append([int(cx - bw / 2), int(cy - bh / 2), int(bw), int(bh)])
                    scores.append(score)
                    classes.append(c)
        keep = cv2.dnn.NMSBoxes(boxes, scores, a.conf, a.nms) if boxes else []
        for i in np.array(keep).flatten():
            x, y, bw, bh = boxes[i]
            cv2.rectangle(frame, (x, y), (x + bw, y + bh), (0, 255, 0), 2)
            cv2.putText(frame, f"{classes[i]} {scores[i]:.2f}", (x, y - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 255, 0), 1)
        writer.write(frame)
        t3 = time.perf_counter()
        if frames >= a.warmup:
            if start is None:
                start = t0
            end = t3
            measured += 1
            infer_s += t2 - t1
        frames += 1
    writer.release()
    wall = (end - start) if start is not None else 0.0
    print(json.dumps({
        "frames": measured,
        "wallSeconds": wall,
        "inferenceSeconds": infer_s,
        "endToEndFps": measured / wall if wall > 0 else 0,
        "inferenceFps": measured / infer_s if infer_s > 0 else 0,
        "opencv": cv2.__version__,
    }))


if __name__ == "__main__":
    main()
