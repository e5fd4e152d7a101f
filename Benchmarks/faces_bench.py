"""Face detection against OpenCV, as `imago-bench faces` runs it (issue 44).

Usage (the bench venv's python: OpenCV 4.14 and scikit-image's data):
  python faces_bench.py make OUT_DIR
      grey PNGs of what a face detector searches: scikit-image's astronaut, coffee and chelsea, a
      4×3 group of LFW faces at 80 px, and the five ukui photos reduced to 800 px (what Imago's
      FaceDetector and thumbor search on a large photo); prints their paths, one a line
  python faces_bench.py time ROUNDS CASCADE FILE...
      for each file, one line: the median seconds of cv2.CascadeClassifier.detectMultiScale with
      thumbor's parameters (scale 1.2, 4 neighbours, minimum max(20, shorter side / 15)) over
      ROUNDS runs after one warm-up, then the number of faces; OpenCV's own threads (its default)
"""
import importlib.util
import os
import sys
import time

import cv2
import numpy as np

PHOTOS = ["/usr/share/backgrounds/" + name for name in ("2004default.jpg", "firstgeneration.jpg", "rhythm.jpg", "string.jpg", "the-mouse.jpg")]


def data_folder():
    return os.path.join(os.path.dirname(importlib.util.find_spec("skimage").origin), "data")


def make(out):
    os.makedirs(out, exist_ok=True)
    paths = []
    for name in ("astronaut", "coffee", "chelsea"):
        folder = data_folder()
        source = next(os.path.join(folder, name + ext) for ext in (".png", ".jpg") if os.path.exists(os.path.join(folder, name + ext)))
        path = os.path.join(out, name + ".png")
        cv2.imwrite(path, cv2.cvtColor(cv2.imread(source, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY))
        paths.append(path)
    faces = np.load(os.path.join(data_folder(), "lfw_subset.npy"))
    side, gap, columns, rows = 80, 20, 4, 3
    canvas = np.full((rows * side + (rows + 1) * gap, columns * side + (columns + 1) * gap), 128, np.uint8)
    for index in range(columns * rows):
        face = cv2.resize((faces[index] * 255).round().astype(np.uint8), (side, side), interpolation=cv2.INTER_LINEAR)
        row, column = divmod(index, columns)
        canvas[gap + row * (side + gap) : gap + row * (side + gap) + side, gap + column * (side + gap) : gap + column * (side + gap) + side] = face
    path = os.path.join(out, "group-4x3.png")
    cv2.imwrite(path, canvas)
    paths.append(path)
    for photo in PHOTOS:
        grey = cv2.cvtColor(cv2.imread(photo, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
        height, width = grey.shape
        scale = 800 / max(width, height)
        grey = cv2.resize(grey, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
        path = os.path.join(out, os.path.splitext(os.path.basename(photo))[0] + "-800.png")
        cv2.imwrite(path, grey)
        paths.append(path)
    print("\n".join(paths))


def timing(rounds, cascade, files):
    classifier = cv2.CascadeClassifier(cascade)
    for path in files:
        grey = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
        height, width = grey.shape
        side = max(20, min(width, height) // 15)
        detect = lambda: classifier.detectMultiScale(grey, scaleFactor=1.2, minNeighbors=4, minSize=(side, side))
        found = detect()
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            detect()
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"{times[len(times) // 2]:.6f} {len(found)}")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    elif sys.argv[1] == "time":
        timing(int(sys.argv[2]), sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
