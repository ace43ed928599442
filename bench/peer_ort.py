#!/usr/bin/python3
"""The same-runtime Python peer for `npm run bench`: YOLOv4-Tiny through Python's onnxruntime (the version jetprof
pins for Node) on jetprof's own .onnx, with the lab's script structure, one frame at a time:
cv2.VideoCapture -> resize -> cv2.dnn.blobFromImage -> session.run -> vectorised numpy decode of the raw heads ->
cv2.dnn.NMSBoxes per class (classes offset apart, one call) -> draw -> cv2.VideoWriter. The heads, anchors and scale_x_y come from the model's own metadata
(`jetprof.model`), so both sides run the same graph on the same runtime; what differs is the code around it.
Prints one JSON line: frames, wall time and inference time (warm-up excluded).

usage: peer_ort.py MODEL.onnx VIDEO OUT.mp4 --frame-size 960x540 --max-frames N --warmup 5 --conf 0.3 --nms 0.5 --threads N
       [--max-candidates 30000]
"""
import argparse
import json
import time

import cv2
import numpy as np
import onnxruntime as ort

from peer_common import add_lab_arguments, run_lab_loop


def decode(outputs, heads, classes, conf, net_w, net_h, frame_w, frame_h):
    """Boxes (x, y, w, h in frame pixels), scores and classes above `conf` (objectness x class probability)."""
    boxes, scores, class_ids = [], [], []
    for head, out in zip(heads, outputs):
        gw, gh, s = head["gridW"], head["gridH"], head["scaleXY"]
        a = len(head["anchors"])
        t = out.reshape(a, 5 + classes, gh, gw)
        act = (lambda v: v) if head.get("newCoords") else (lambda v: 1 / (1 + np.exp(-v)))
        obj = act(t[:, 4])
        cols = np.arange(gw)[None, None, :]
        rows = np.arange(gh)[None, :, None]
        cx = (cols + act(t[:, 0]) * s - (s - 1) / 2) / gw * net_w
        cy = (rows + act(t[:, 1]) * s - (s - 1) / 2) / gh * net_h
        anchors = np.array(head["anchors"], dtype=np.float32)
        if head.get("newCoords"):
            bw = t[:, 2] ** 2 * 4 * anchors[:, 0, None, None]
            bh = t[:, 3] ** 2 * 4 * anchors[:, 1, None, None]
        else:
            bw = np.exp(t[:, 2]) * anchors[:, 0, None, None]
            bh = np.exp(t[:, 3]) * anchors[:, 1, None, None]
        probs = obj[:, None] * act(t[:, 5:])  # [a, classes, gh, gw]
        ai, ci, yi, xi = np.nonzero(probs > conf)
        sx, sy = frame_w / net_w, frame_h / net_h
        w_, h_ = bw[ai, yi, xi] * sx, bh[ai, yi, xi] * sy
        x_, y_ = cx[ai, yi, xi] * sx - w_ / 2, cy[ai, yi, xi] * sy - h_ / 2
        boxes.append(np.stack([x_, y_, w_, h_], axis=1))
        scores.append(probs[ai, ci, yi, xi])
        class_ids.append(ci)
    boxes = np.concatenate(boxes) if boxes else np.zeros((0, 4), np.float32)
    scores = np.concatenate(scores) if scores else np.zeros(0, np.float32)
    class_ids = np.concatenate(class_ids) if class_ids else np.zeros(0, np.int64)
    return boxes, scores, class_ids


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    add_lab_arguments(p)
    p.add_argument("--max-candidates", type=int, default=30000)
    a = p.parse_args()
    w, h = (int(v) for v in a.frame_size.split("x"))
    so = ort.SessionOptions()
    if a.threads:
        so.intra_op_num_threads = a.threads
    sess = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    info = json.loads(sess.get_modelmeta().custom_metadata_map["jetprof.model"])
    heads, classes = info["heads"], info["classes"]
    net_w, net_h = info["inputWidth"], info["inputHeight"]
    input_name = sess.get_inputs()[0].name
    output_names = [hd["output"] for hd in heads]

    def step(frame):
        blob = cv2.dnn.blobFromImage(frame, 1 / 255.0, (net_w, net_h), swapRB=True, crop=False)
        t1 = time.perf_counter()
        outs = sess.run(output_names, {input_name: blob})
        t2 = time.perf_counter()
        boxes, scores, class_ids = decode(outs, heads, classes, a.conf, net_w, net_h, w, h)
        if len(scores) > a.max_candidates:  # the cap jetprof applies before NMS (--max-candidates): top scores
            top = np.argpartition(-scores, a.max_candidates)[: a.max_candidates]
            boxes, scores, class_ids = boxes[top], scores[top], class_ids[top]
        # per-class NMS in one call: each class's boxes moved apart by an offset larger than the frame
        offset = class_ids[:, None].astype(np.float32) * (w + h)
        shifted = boxes.copy()
        shifted[:, :2] += offset
        keep = cv2.dnn.NMSBoxes(shifted.tolist(), scores.tolist(), a.conf, a.nms) if len(scores) else []
        for k in np.array(keep).flatten():
            x, y, bw, bh = (int(v) for v in boxes[k])
            cv2.rectangle(frame, (x, y), (x + bw, y + bh), (0, 255, 0), 2)
            cv2.putText(frame, f"{class_ids[k]} {scores[k]:.2f}", (x, y - 4), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 255, 0), 1)
        return t2 - t1

    run_lab_loop(a.video, a.out, (w, h), "avc1", a.max_frames, a.warmup, step, {"onnxruntime": ort.__version__})


if __name__ == "__main__":
    main()
