extension ImagoError {
    /// A decoder's refusal of its input: "PNG: chunk cut short", at the decoding stage, for every
    /// decoder alike (an empty message reads "unreadable").
    static func invalid(_ format: ImageFormat, _ message: String) -> ImagoError {
        ImagoError(.invalidImage(format.displayName + ": " + (message.isEmpty ? "unreadable" : message)), url: nil, stage: .decoding)
    }
}

extension ImageFormat {
    /// The format as people write it: JPEG, JPEG XL, WebP, HEIF.
    var displayName: String {
        switch self {
        case .jxl: "JPEG XL"
        case .webp: "WebP"
        default: rawValue.uppercased()
        }
    }
}
