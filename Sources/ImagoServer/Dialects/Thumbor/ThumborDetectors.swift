import Foundation
import Imago

/// thumbor's `DETECTORS`: what a `/smart/` URL looks for, in order, until one finds something.
/// The cascade detectors (faces, profiles, glasses) run OpenCV's cascade files with thumbor's
/// parameters (scale 1.2, 4 neighbours, windows at least a fifteenth of the shorter side) on the
/// picture's luma as Pillow makes it; each box is a focal point at its centre weighted by its area,
/// a face's raised by 12% of its height for the hair (not above the top). The feature detector
/// takes 20 Shi–Tomasi corners, each a point of weight 1. Cascades are read once, when the service
/// starts.
public struct ThumborDetectors: Sendable {
    /// A detector thumbor ships.
    public enum Kind: String, Sendable, CaseIterable {
        /// `thumbor.detectors.face_detector`: `FACE_DETECTOR_CASCADE_FILE`.
        case face = "face_detector"
        /// `thumbor.detectors.profile_detector`: `PROFILE_DETECTOR_CASCADE_FILE`.
        case profile = "profile_detector"
        /// `thumbor.detectors.glasses_detector`: `GLASSES_DETECTOR_CASCADE_FILE`.
        case glasses = "glasses_detector"
        /// `thumbor.detectors.feature_detector`: Shi–Tomasi corners.
        case feature = "feature_detector"

        /// The kind a thumbor module path or its last part names (`thumbor.detectors.face_detector`,
        /// `face_detector`), nil for one Imago does not have (thumbor's queued detectors, a plugin).
        public init?(module: String) {
            let name = module.split(separator: ".").last.map(String.init) ?? module
            self.init(rawValue: name)
        }

        /// What thumbor's `meta/` reports as the origin of this detector's points.
        var origin: String {
            switch self {
            case .face: "Face Detection"
            case .feature: "alignment"
            case .profile, .glasses: "detection"
            }
        }
    }

    /// The cascade files, by the setting that names them; a relative name is under `directory`.
    public struct CascadeFiles: Sendable, Hashable {
        /// Where relative names are looked for: Debian's `opencv-data` by default.
        public var directory = "/usr/share/opencv4/haarcascades"
        /// `FACE_DETECTOR_CASCADE_FILE`.
        public var face = "haarcascade_frontalface_alt.xml"
        /// `PROFILE_DETECTOR_CASCADE_FILE`.
        public var profile = "haarcascade_profileface.xml"
        /// `GLASSES_DETECTOR_CASCADE_FILE`.
        public var glasses = "haarcascade_eye_tree_eyeglasses.xml"

        /// thumbor's defaults, in Debian's folder.
        public init() {}

        func url(for kind: Kind) -> URL? {
            let name: String
            switch kind {
            case .face: name = face
            case .profile: name = profile
            case .glasses: name = glasses
            case .feature: return nil
            }
            return name.hasPrefix("/") ? URL(fileURLWithPath: name) : URL(fileURLWithPath: directory).appendingPathComponent(name)
        }
    }

    private let chain: [(kind: Kind, cascade: CascadeClassifier?)]
    /// What decides the points: part of every `/smart/` variant's key.
    let identity: String

    /// No detectors: `/smart/` falls back to Imago's saliency.
    public static let none = ThumborDetectors(chain: [], identity: "")

    private init(chain: [(kind: Kind, cascade: CascadeClassifier?)], identity: String) {
        self.chain = chain
        self.identity = identity
    }

    /// The detectors `kinds` names, in order, their cascades read from `files`; a file that cannot
    /// be read stops the service with a message that names it.
    public init(_ kinds: [Kind], files: CascadeFiles) throws(ServerError) {
        var chain: [(kind: Kind, cascade: CascadeClassifier?)] = []
        var identity: [String] = []
        for kind in kinds {
            guard let url = files.url(for: kind) else {
                chain.append((kind, nil))
                identity.append(kind.rawValue)
                continue
            }
            do {
                chain.append((kind, try CascadeClassifier(contentsOf: url)))
            } catch {
                throw ServerError(
                    status: 500, "thumbor's \(kind.rawValue) cannot use \(url.path): \(error.description) (Debian's opencv-data installs the cascades)")
            }
            // The file's size and modification date stand for its content in variants' keys.
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            let stamp = "\((attributes?[.size] as? Int) ?? 0)@\((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
            identity.append("\(kind.rawValue):\(url.path):\(stamp)")
        }
        self.init(chain: chain, identity: identity.joined(separator: ","))
    }

    /// Whether any detector is configured.
    public var isEmpty: Bool { chain.isEmpty }

    /// The focal points the first detector that finds anything finds in `image`, in its pixels;
    /// empty when none does.
    func focalPoints(in image: Image) -> [FocalPoint] {
        guard !chain.isEmpty else { return [] }
        let plane = GrayPlane(image)
        for (kind, cascade) in chain {
            if let cascade {
                let options = CascadeClassifier.DetectionOptions.thumbor(width: plane.width, height: plane.height)
                let found = cascade.detect(in: plane, options: options)
                guard !found.isEmpty else { continue }
                return found.map { box in
                    // thumbor's face detector moves the box up by 12% of its height (the hair), unless
                    // that would leave the picture; its other detectors keep the box.
                    var top = Double(box.y)
                    if kind == .face, top - Double(box.height) * 0.12 >= 0 { top -= Double(box.height) * 0.12 }
                    return FocalPoint(
                        x: box.x + box.width / 2, y: Int(top + Double(box.height / 2)), width: box.width, height: box.height,
                        weight: Double(box.width * box.height), origin: kind.origin)
                }
            } else {
                let corners = CornerDetector().corners(in: plane)
                guard !corners.isEmpty else { continue }
                return corners.map { FocalPoint(x: $0.x, y: $0.y, origin: kind.origin) }
            }
        }
        return []
    }
}
