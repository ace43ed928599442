#!/usr/bin/python3
"""The Python peer for `npm run bench`: YOLOv4-Tiny on a video with the lab's structure, one frame at a time:
cv2.VideoCapture -> resize -> cv2.dnn (darknet cfg + weights) -> decode -> NMSBoxes -> draw -> cv2.VideoWriter.
Runs on Debian's python3-opencv. Prints one JSON line: frames, wall time and inference time (warm-up excluded).

usage: peer_lab.py CFG WEIGHTS VIDEO OUT.mp4 --frame-size 960x540 --max-frames N --warmup 5 --conf 0.3 --nms 0.5 --threads N
"""
import argparse
import time

import cv2
import numpy as np

from peer_common import add_lab_arguments, run_lab_loop


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cfg")
    p.add_argument("weights")
    add_lab_arguments(p)
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
    def step(frame):
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
        return t2 - t1

    run_lab_loop(a.video, a.out, (w, h), "mp4v", a.max_frames, a.warmup, step, {})


if __name__ == "__main__":
    main()
