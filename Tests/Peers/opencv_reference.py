#!/usr/bin/env python3
"""OpenCV 4.14 (PyPI's opencv-python-headless) as the detection reference for the tests, on test
pictures from scikit-image's data (its wheel, installed without its dependencies).

  picture NAME OUT.pgm        scikit-image's NAME.png (or .jpg) as 8-bit grey, written as binary PGM
                              (colour made grey by OpenCV's BGR2GRAY)
  colour NAME OUT             scikit-image's NAME as it is (colour), written in OUT's format (by extension)
  photo IN.jpg OUT.jpg WIDTH  a photo reduced to WIDTH pixels wide (area), written as a 4:2:0 JPEG
  group OUT.pgm COLUMNS ROWS SIDE
                              a group photo: the first COLUMNS x ROWS faces of scikit-image's
                              lfw_subset, each enlarged to SIDE pixels (bilinear), on mid grey with a
                              quarter of SIDE between them
  detect CASCADE IN.pgm SCALE NEIGHBOURS MINW MINH
                              JSON: cv2.CascadeClassifier(CASCADE).detectMultiScale's boxes
  corners IN.pgm MAX QUALITY DISTANCE
                              JSON: cv2.goodFeaturesToTrack's corners, strongest first
"""
import json
import os
import sys

import cv2
import numpy as np


def data_folder():
    import importlib.util

    spec = importlib.util.find_spec("skimage")
    return os.path.join(os.path.dirname(spec.origin), "data")


def picture(name, out):
    folder = data_folder()
    path = next(os.path.join(folder, name + ext) for ext in (".png", ".jpg") if os.path.exists(os.path.join(folder, name + ext)))
    image = cv2.imread(path, cv2.IMREAD_COLOR)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    cv2.imwrite(out, grey)


def photo(source, out, width):
    """A JPEG photo reduced to WIDTH (area filter), written as OpenCV's default JPEG: 4:2:0, q95."""
    image = cv2.imread(source, cv2.IMREAD_COLOR)
    height = round(image.shape[0] * int(width) / image.shape[1])
    cv2.imwrite(out, cv2.resize(image, (int(width), height), interpolation=cv2.INTER_AREA))


def colour(name, out):
    folder = data_folder()
    path = next(os.path.join(folder, name + ext) for ext in (".png", ".jpg") if os.path.exists(os.path.join(folder, name + ext)))
    cv2.imwrite(out, cv2.imread(path, cv2.IMREAD_COLOR))


def group(out, columns, rows, side):
    faces = np.load(os.path.join(data_folder(), "lfw_subset.npy"))
    gap = side // 4
    canvas = np.full((rows * side + (rows + 1) * gap, columns * side + (columns + 1) * gap), 128, np.uint8)
    for index in range(columns * rows):
        face = (faces[index] * 255).round().astype(np.uint8)
        face = cv2.resize(face, (side, side), interpolation=cv2.INTER_LINEAR)
        row, column = divmod(index, columns)
        top, left = gap + row * (side + gap), gap + column * (side + gap)
        canvas[top:top + side, left:left + side] = face
    cv2.imwrite(out, canvas)


def detect(cascade, path, scale, neighbours, min_width, min_height):
    classifier = cv2.CascadeClassifier(cascade)
    if classifier.empty():
        sys.exit(f"OpenCV did not load {cascade}")
    grey = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    boxes = classifier.detectMultiScale(grey, float(scale), int(neighbours), minSize=(int(min_width), int(min_height)))
    print(json.dumps([[int(v) for v in box] for box in boxes]))


def corners(path, most, quality, distance):
    grey = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    points = cv2.goodFeaturesToTrack(grey, maxCorners=int(most), qualityLevel=float(quality), minDistance=float(distance), useHarrisDetector=False)
    points = [] if points is None else points.reshape(-1, 2).tolist()
    print(json.dumps([[int(x), int(y)] for x, y in points]))


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "picture":
        picture(*arguments)
    elif command == "colour":
        colour(*arguments)
    elif command == "photo":
        photo(*arguments)
    elif command == "group":
        group(arguments[0], *map(int, arguments[1:]))
    elif command == "detect":
        detect(*arguments)
    elif command == "corners":
        corners(*arguments)
    else:
        sys.exit(__doc__)
