/// OpenCV's `groupRectangles`: a cascade's hits become one box per cluster of similar hits.
enum RectangleGrouping {
    /// Hits whose four edges each lie within `eps` of their mean size are one cluster (transitively);
    /// a cluster of more than `threshold` hits becomes its mean box (each side rounded to the
    /// nearest, ties to even), unless it lies within a larger kept box (with `eps` of its size to
    /// spare) that had more hits (more than 3, or it had fewer than 3). A threshold of 0 or less
    /// keeps every hit as it is.
    static func group(_ hits: [CascadeClassifier.Detection], threshold: Int, eps: Double) -> [CascadeClassifier.Detection] {
        guard threshold > 0, !hits.isEmpty else { return hits }
        // Union–find over every pair, as OpenCV's partition does.
        var parent = Array(hits.indices)
        func root(_ index: Int) -> Int {
            var index = index
            while parent[index] != index {
                parent[index] = parent[parent[index]]
                index = parent[index]
            }
            return index
        }
        for i in hits.indices {
            for j in (i + 1)..<hits.count where similar(hits[i], hits[j], eps: eps) {
                let a = root(i), b = root(j)
                if a != b { parent[b] = a }
            }
        }
        var clusters: [Int: (x: Int, y: Int, width: Int, height: Int, count: Int)] = [:]
        var order: [Int] = []
        for index in hits.indices {
            let key = root(index)
            let hit = hits[index]
            if clusters[key] == nil { order.append(key) }
            var cluster = clusters[key] ?? (0, 0, 0, 0, 0)
            cluster.x += hit.x
            cluster.y += hit.y
            cluster.width += hit.width
            cluster.height += hit.height
            cluster.count += 1
            clusters[key] = cluster
        }
        let boxes = order.compactMap { clusters[$0] }.map { cluster -> CascadeClassifier.Detection in
            let scale = 1 / Float(cluster.count)
            func mean(_ total: Int) -> Int { Int((Float(total) * scale).rounded(.toNearestOrEven)) }
            return CascadeClassifier.Detection(
                x: mean(cluster.x), y: mean(cluster.y), width: mean(cluster.width), height: mean(cluster.height), neighbors: cluster.count)
        }
        return boxes.enumerated().compactMap { index, box in
            guard box.neighbors > threshold else { return nil }
            let insideAnother = boxes.enumerated().contains { other, larger in
                guard other != index, larger.neighbors > threshold else { return false }
                let dx = Int((Double(larger.width) * eps).rounded(.toNearestOrEven))
                let dy = Int((Double(larger.height) * eps).rounded(.toNearestOrEven))
                return box.x >= larger.x - dx && box.y >= larger.y - dy && box.x + box.width <= larger.x + larger.width + dx
                    && box.y + box.height <= larger.y + larger.height + dy && (larger.neighbors > max(3, box.neighbors) || box.neighbors < 3)
            }
            return insideAnother ? nil : box
        }
    }

    private static func similar(_ a: CascadeClassifier.Detection, _ b: CascadeClassifier.Detection, eps: Double) -> Bool {
        let delta = eps * Double(min(a.width, b.width) + min(a.height, b.height)) * 0.5
        return Double(abs(a.x - b.x)) <= delta && Double(abs(a.y - b.y)) <= delta && Double(abs(a.x + a.width - b.x - b.width)) <= delta
            && Double(abs(a.y + a.height - b.y - b.height)) <= delta
    }
}
