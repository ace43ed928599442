"""What the bench's Python peers share: the lab's one-frame-at-a-time loop and its timing (warm-up excluded), and the
one JSON line they print. Each peer gives `step(frame)`: preprocess, inference, decode, NMS, draw; it returns the
seconds its inference took."""
import json
import time

import cv2


def add_lab_arguments(p):
    """The arguments every peer takes after its model: the video, the output, and the lab's settings."""
    p.add_argument("video")
    p.add_argument("out")
    p.add_argument("--frame-size", default="960x540")
    p.add_argument("--max-frames", type=int, default=0)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--conf", type=float, default=0.3)
    p.add_argument("--nms", type=float, default=0.5)
    p.add_argument("--threads", type=int, default=0)


def run_lab_loop(video, out, frame_size, fourcc, max_frames, warmup, step, extra):
    """Reads `video`, resizes each frame to `frame_size` (w, h), runs `step`, writes it; prints the JSON line."""
    w, h = frame_size
    cap = cv2.VideoCapture(video)
    fps = cap.get(cv2.CAP_PROP_FPS) or 30
    writer = cv2.VideoWriter(out, cv2.VideoWriter_fourcc(*fourcc), fps, (w, h))
    frames = measured = 0
    infer_s = 0.0
    start = end = None
    while not (max_frames and frames >= max_frames):
        t0 = time.perf_counter()
        ok, frame = cap.read()
        if not ok:
            break
        frame = cv2.resize(frame, (w, h))
        infer = step(frame)
        writer.write(frame)
        t1 = time.perf_counter()
        if frames >= warmup:
            if start is None:
                start = t0
            end = t1
            measured += 1
            infer_s += infer
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
        **extra,
    }))
