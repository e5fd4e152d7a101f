import Foundation

/// A video container Imago reads poster frames from, told from its first bytes, and the FFmpeg
/// demuxer that alone may read it.
enum VideoContainer: CaseIterable, Sendable {
    /// ISO base media (MP4, M4V, 3GP) with a video brand.
    case mp4
    /// Apple QuickTime (`qt  ` brand, or an old file that starts with a movie's own atom).
    case quickTime
    /// WebM (Matroska with the `webm` document type).
    case webm
    /// Matroska.
    case matroska
    /// RIFF AVI.
    case avi

    var format: ImageFormat {
        switch self {
        case .mp4: .mp4
        case .quickTime: .mov
        case .webm: .webm
        case .matroska: .mkv
        case .avi: .avi
        }
    }

    /// FFmpeg's short name for the demuxer.
    var demuxer: String {
        switch self {
        case .mp4, .quickTime: "mov"
        case .webm, .matroska: "matroska"
        case .avi: "avi"
        }
    }

    /// ISO base media brands of still images and camera RAW, which other decoders read.
    private static let stillBrands: Set<String> = [
        "heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "mif2", "msf1", "avif", "avis", "avio", "crx ", "jpeg", "jpgs",
        "jp2 ", "jpx ", "jpm ", "mjp2", "jxl ",
    ]
    /// Atoms a QuickTime movie without `ftyp` may start with.
    private static let quickTimeAtoms: Set<String> = ["moov", "mdat", "wide", "free", "skip", "pnot"]

    /// The container `data` starts like, or nil.
    static func sniff(_ data: Data) -> VideoContainer? {
        guard data.count >= 12 else { return nil }
        let start = data.startIndex
        func text(_ offset: Int, _ count: Int) -> String {
            String(decoding: data[(start + offset)..<(start + offset + count)], as: UTF8.self)
        }
        if text(0, 4) == "RIFF", text(8, 4) == "AVI " { return .avi }
        if data.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) {
            // The EBML header names its document type within its first few dozen bytes.
            let header = data.prefix(64)
            return header.firstRange(of: Data("webm".utf8)) != nil ? .webm : .matroska
        }
        let size = data[start..<(start + 4)].reduce(0) { $0 << 8 | Int($1) }
        let type = text(4, 4)
        if type == "ftyp", size >= 12 {
            let brand = text(8, 4)
            if stillBrands.contains(brand) { return nil }
            return brand == "qt  " ? .quickTime : .mp4
        }
        // An atom size of 0 (to the end) or 1 (64-bit) and anything from 8 up are atoms' sizes.
        if quickTimeAtoms.contains(type), size == 0 || size == 1 || size >= 8 { return .quickTime }
        return nil
    }
}
