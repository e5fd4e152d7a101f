import Foundation

/// A boosted cascade of OpenCV's kind (Viola–Jones), read from the XML files OpenCV writes: Haar
/// features (upright and tilted) or local binary patterns, stumps or small trees. The faces,
/// profiles and eyes that thumbor's detectors find come from such files: Debian's `opencv-data`
/// installs them under `/usr/share/opencv4/haarcascades/`.
///
/// Everything is checked when the file is read, before any of it is used: the file's size, each
/// count, every rectangle inside the detection window, every feature index and tree link in range
/// and every link pointing forward (so no walk can loop), every number finite. A file that fails is
/// refused with ``LoadError``; a loaded cascade never reads outside its tables.
///
/// Detection is ``detect(in:options:)``, as OpenCV's `detectMultiScale` does it.
public struct CascadeClassifier: Sendable {
    /// The kind of feature the cascade's weak classifiers look at.
    public enum FeatureKind: String, Sendable {
        /// Sums of rectangles, upright or turned 45°, weighted: thresholds on the result.
        case haar
        /// Local binary patterns of 3×3 blocks: each node keeps a set of the 256 codes.
        case lbp
    }

    /// Why a cascade file is refused.
    public struct LoadError: Error, Equatable, CustomStringConvertible {
        /// What is wrong, in a few words.
        public var description: String
    }

    /// The detection window's width and height, in pixels, at scale 1.
    public let windowWidth: Int
    /// The detection window's height.
    public let windowHeight: Int
    /// The kind of features.
    public let featureKind: FeatureKind
    /// A 64-bit FNV-1a digest of the file's bytes, in hex: what stands for the cascade in the
    /// identifiers of processors that use it.
    public let digest: String

    /// A stage: its weak classifiers (a range of ``trees``) and the sum it must reach.
    struct Stage: Sendable {
        var trees: Range<Int>
        var threshold: Float
    }

    /// A weak classifier: its nodes (a range of ``nodes``) and its leaves (a range of ``leaves``).
    struct Tree: Sendable {
        var nodes: Range<Int>
        var leaves: Range<Int>
    }

    /// A node: its feature, its threshold (Haar) or its set of codes (LBP, 8 words in ``subsets``),
    /// and where each side goes: a later node of the same tree (> 0, relative to the tree's first)
    /// or a leaf (≤ 0: leaf −n).
    struct Node: Sendable {
        var feature: Int
        var threshold: Float
        var left: Int
        var right: Int
    }

    /// A Haar feature: up to three weighted rectangles in the window.
    struct HaarFeature: Sendable {
        var rectangles: [(x: Int, y: Int, width: Int, height: Int, weight: Float)]
        var tilted: Bool
    }

    let stages: [Stage]
    let trees: [Tree]
    let nodes: [Node]
    let leaves: [Float]
    let subsets: [Int32]
    let haarFeatures: [HaarFeature]
    /// LBP features: the top-left block of each 3×3 grid, by its size.
    let lbpFeatures: [(x: Int, y: Int, width: Int, height: Int)]
    /// Whether any Haar feature is tilted (the tilted integral is then made).
    let hasTiltedFeatures: Bool

    /// Files larger than this are refused (OpenCV's largest, `haarcascade_frontalface_alt_tree.xml`,
    /// is 2.7 MB).
    public static let maxFileSize = 16 << 20
    static let maxStages = 1000
    static let maxTrees = 200_000
    static let maxNodesPerTree = 64
    static let maxFeatures = 200_000
    static let maxWindowSide = 256

    /// Reads the cascade in the file at `url`.
    public init(contentsOf url: URL) throws(LoadError) {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: url) } catch { throw LoadError(description: "cannot open \(url.path)") }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: Self.maxFileSize + 1) ?? Data() } catch { throw LoadError(description: "cannot read \(url.path)") }
        try self.init(xml: data)
    }

    /// Reads a cascade from the bytes of an OpenCV cascade file (`opencv_storage` with a `cascade`
    /// of `BOOST` stages). OpenCV's old format (`haarcascade` with `trees`) is refused: every
    /// cascade OpenCV ships since 3.0 is in the new one.
    public init(xml data: Data) throws(LoadError) {
        guard data.count <= Self.maxFileSize else { throw LoadError(description: "larger than \(Self.maxFileSize) bytes") }
        guard let text = String(data: data, encoding: .utf8) else { throw LoadError(description: "not UTF-8") }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        digest = String(hash, radix: 16)
        let root: CascadeXML.Element
        do { root = try CascadeXML.parse(Substring(text)) } catch { throw LoadError(description: error.description) }
        guard root.name == "opencv_storage", let cascade = root.children.first else { throw LoadError(description: "not an OpenCV storage file") }
        guard cascade.child("stageType")?.text.trimmed == "BOOST" else {
            throw LoadError(description: "not a boosted cascade (OpenCV's old format is not read)")
        }
        switch cascade.child("featureType")?.text.trimmed {
        case "HAAR": featureKind = .haar
        case "LBP": featureKind = .lbp
        default: throw LoadError(description: "a feature type other than HAAR or LBP")
        }
        let width = try Self.integer(cascade.child("width"), "width")
        let height = try Self.integer(cascade.child("height"), "height")
        guard (4...Self.maxWindowSide).contains(width), (4...Self.maxWindowSide).contains(height) else {
            throw LoadError(description: "a window of \(width)×\(height)")
        }
        windowWidth = width
        windowHeight = height
        let categories = try Self.integer(cascade.child("featureParams")?.child("maxCatCount"), "maxCatCount")
        guard featureKind == .haar ? categories == 0 : categories == 256 else { throw LoadError(description: "maxCatCount \(categories) for \(featureKind)") }

        guard let featureList = cascade.child("features")?.children, !featureList.isEmpty, featureList.count <= Self.maxFeatures else {
            throw LoadError(description: "no features, or too many")
        }
        var haar: [HaarFeature] = []
        var lbp: [(x: Int, y: Int, width: Int, height: Int)] = []
        if featureKind == .haar {
            haar = try featureList.map { element throws(LoadError) in try Self.haarFeature(element, width: width, height: height) }
        } else {
            lbp = try featureList.map { element throws(LoadError) in try Self.lbpFeature(element, width: width, height: height) }
        }
        haarFeatures = haar
        lbpFeatures = lbp
        hasTiltedFeatures = haar.contains { $0.tilted }

        guard let stageList = cascade.child("stages")?.children, !stageList.isEmpty, stageList.count <= Self.maxStages else {
            throw LoadError(description: "no stages, or too many")
        }
        var stages: [Stage] = []
        var trees: [Tree] = []
        var nodes: [Node] = []
        var leaves: [Float] = []
        var subsets: [Int32] = []
        // Each node is left, right, feature, then a threshold (Haar) or 8 words of codes (LBP).
        let nodeStep = featureKind == .haar ? 4 : 3 + 8
        for stageElement in stageList {
            // OpenCV lowers each stage's threshold by 1e-5 so that a sum equal to it passes.
            let threshold = Float(try Self.number(stageElement.child("stageThreshold"), "stageThreshold")) - Float(1e-5)
            guard let weakList = stageElement.child("weakClassifiers")?.children, !weakList.isEmpty else {
                throw LoadError(description: "a stage without weak classifiers")
            }
            guard trees.count + weakList.count <= Self.maxTrees else { throw LoadError(description: "more than \(Self.maxTrees) weak classifiers") }
            let firstTree = trees.count
            for weak in weakList {
                let values = try Self.numbers(weak.child("internalNodes"), "internalNodes")
                let leafValues = try Self.numbers(weak.child("leafValues"), "leafValues")
                guard !values.isEmpty, values.count % nodeStep == 0, values.count / nodeStep <= Self.maxNodesPerTree else {
                    throw LoadError(description: "internalNodes of \(values.count) numbers")
                }
                let count = values.count / nodeStep
                // A tree of n nodes has n + 1 leaves; each node's sides point forward or to a leaf.
                guard leafValues.count == count + 1 else { throw LoadError(description: "\(leafValues.count) leaves for \(count) nodes") }
                let firstNode = nodes.count
                for index in 0..<count {
                    let base = index * nodeStep
                    guard let left = Int(exactly: values[base]), let right = Int(exactly: values[base + 1]),
                        let feature = Int(exactly: values[base + 2]), featureList.indices.contains(feature)
                    else { throw LoadError(description: "a node with a link or feature out of range") }
                    for side in [left, right] {
                        let forward = side > index && side < count
                        let leaf = side <= 0 && -side <= count
                        guard forward || leaf else { throw LoadError(description: "a node linking to \(side)") }
                    }
                    var threshold: Float = 0
                    if featureKind == .haar {
                        threshold = Float(values[base + 3])
                    } else {
                        for word in values[(base + 3)..<(base + 11)] {
                            guard let bits = Int32(exactly: word) else { throw LoadError(description: "a code set word out of range") }
                            subsets.append(bits)
                        }
                    }
                    nodes.append(Node(feature: feature, threshold: threshold, left: left, right: right))
                }
                trees.append(Tree(nodes: firstNode..<nodes.count, leaves: leaves.count..<(leaves.count + leafValues.count)))
                leaves += leafValues.map { Float($0) }
            }
            stages.append(Stage(trees: firstTree..<trees.count, threshold: threshold))
        }
        self.stages = stages
        self.trees = trees
        self.nodes = nodes
        self.leaves = leaves
        self.subsets = subsets
    }

    // MARK: - Reading

    private static func haarFeature(_ element: CascadeXML.Element, width: Int, height: Int) throws(LoadError) -> HaarFeature {
        guard let rects = element.child("rects")?.children, (1...3).contains(rects.count) else {
            throw LoadError(description: "a Haar feature without one to three rectangles")
        }
        let tilted = try element.child("tilted").map { tilted throws(LoadError) in try integer(tilted, "tilted") != 0 } ?? false
        var rectangles: [(x: Int, y: Int, width: Int, height: Int, weight: Float)] = []
        for rect in rects {
            let values = try numbers(rect, "rects")
            guard values.count == 5, let x = Int(exactly: values[0]), let y = Int(exactly: values[1]), let w = Int(exactly: values[2]),
                let h = Int(exactly: values[3]), x >= 0, y >= 0, w >= 0, h >= 0
            else { throw LoadError(description: "a rectangle that is not 4 whole numbers and a weight") }
            // Upright: the rectangle itself; tilted: the diamond from (x, y) down-left by h and
            // down-right by w. Either must lie inside the window, whose integral has one more row
            // and column.
            let inside =
                tilted
                ? x - h >= 0 && x + w <= width && y + w + h <= height
                : x + w <= width && y + h <= height
            guard inside else { throw LoadError(description: "a rectangle outside the \(width)×\(height) window") }
            rectangles.append((x, y, w, h, Float(values[4])))
        }
        return HaarFeature(rectangles: rectangles, tilted: tilted)
    }

    private static func lbpFeature(_ element: CascadeXML.Element, width: Int, height: Int) throws(LoadError) -> (x: Int, y: Int, width: Int, height: Int) {
        let values = try numbers(element.child("rect"), "rect")
        guard values.count == 4, let x = Int(exactly: values[0]), let y = Int(exactly: values[1]), let w = Int(exactly: values[2]),
            let h = Int(exactly: values[3]), x >= 0, y >= 0, w > 0, h > 0, x + 3 * w <= width, y + 3 * h <= height
        else { throw LoadError(description: "an LBP block outside the window") }
        return (x, y, w, h)
    }

    private static func integer(_ element: CascadeXML.Element?, _ name: String) throws(LoadError) -> Int {
        let values = try numbers(element, name)
        guard values.count == 1, let value = Int(exactly: values[0]) else { throw LoadError(description: "\(name) is not a whole number") }
        return value
    }

    private static func number(_ element: CascadeXML.Element?, _ name: String) throws(LoadError) -> Double {
        let values = try numbers(element, name)
        guard values.count == 1 else { throw LoadError(description: "\(name) is not one number") }
        return values[0]
    }

    /// The whitespace-separated numbers of an element's text, each finite and within ±1e9.
    private static func numbers(_ element: CascadeXML.Element?, _ name: String) throws(LoadError) -> [Double] {
        guard let element else { throw LoadError(description: "no \(name)") }
        var values: [Double] = []
        for word in element.text.split(whereSeparator: \.isWhitespace) {
            guard let value = Double(word), value.isFinite, abs(value) <= 1e10 else { throw LoadError(description: "\(name) holds \(word.prefix(20))") }
            values.append(value)
        }
        return values
    }
}

extension Substring {
    fileprivate var trimmed: Substring {
        guard let start = firstIndex(where: { !$0.isWhitespace }), let end = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return self[start...end]
    }
}
