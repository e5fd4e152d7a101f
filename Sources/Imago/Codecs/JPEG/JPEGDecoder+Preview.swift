import Foundation

extension JPEGDecoder {
    /// A progressive JPEG's complete scans, once a further one is complete (each refines the whole
    /// picture; `reached` counts scans); a baseline JPEG's rows so far, once the first scan has
    /// started and more bytes arrived (`reached` counts bytes).
    public func preview(of data: Data, after shown: Int, options: DecodingOptions) -> PartialImage? {
        let layout = data.withUnsafeBytes { JPEGScanLayout($0) }
        if layout.isProgressive {
            guard layout.completeScans > shown else { return nil }
            // Exactly the complete scans, closed with EOI, so libjpeg never reads a half-received
            // table that follows them.
            let scans = data.prefix(layout.endOfCompleteScans) + [0xFF, 0xD9]
            return (try? decode(scans, options: options)).map { PartialImage(image: $0, reached: layout.completeScans) }
        }
        guard layout.scanStarted, data.count > shown else { return nil }
        return (try? decode(data, options: options)).map { PartialImage(image: $0, reached: data.count) }
    }
}
