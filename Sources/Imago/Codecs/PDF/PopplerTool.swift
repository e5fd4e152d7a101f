#if PDF
    import Foundation

    /// A program of Debian's poppler-utils, run as a ``ChildProcess``: Poppler has no way to be
    /// stopped from inside, so it runs where it can be killed at the deadline, its heap bounded by
    /// the kernel. The document goes to its standard input; nothing but the document is read.
    enum PopplerTool: String, Sendable {
        /// `pdfinfo`: the page count and each page's boxes and rotation.
        case info = "pdfinfo"
        /// `pdftoppm`: pages rendered by Splash on white, as PPM.
        case render = "pdftoppm"
        /// `pdftocairo`: a page rendered by cairo with no background, as PNG.
        case renderTransparent = "pdftocairo"

        /// Where the programs are looked for, in order.
        static let folders = ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"]

        /// Heap a tool may use beside the pages it renders and the document it holds: Poppler's
        /// parse, fonts and caches (pdftoppm rendering a text page at 512 px peaks near 12 MB).
        static let baseMemory = 48 << 20

        /// The program's path, or `codecUnavailable` when poppler-utils is not installed.
        func path() throws(ImagoError) -> String {
            for folder in Self.folders {
                let path = folder + "/" + rawValue
                if access(path, X_OK) == 0 { return path }
            }
            throw ImagoError(
                .codecUnavailable("PDF is not available: \(rawValue) (poppler-utils) is not installed in \(Self.folders.joined(separator: ", "))"),
                url: nil, stage: .decoding)
        }

        /// What the tool wrote to its standard output given `document` on its standard input, or
        /// why it failed: `timedOut` at `deadline`, the document refused when the tool says it
        /// cannot read it (its exit status) or writes more than `maxOutput`.
        func run(_ arguments: [String], document: Data, maxOutput: Int, maxHeap: Int, deadline: Int64) throws(ImagoError) -> Data {
            let child = ChildProcess(path: try path(), arguments: arguments, maxOutput: maxOutput, maxHeap: maxHeap, deadline: deadline)
            switch child.run(input: document) {
            case .timedOut:
                throw ImagoError(.timedOut, url: nil, stage: .decoding)
            case .outputTooLarge:
                throw ImagoError.invalid(.pdf, "\(rawValue) wrote more than the \(maxOutput) bytes its pages need")
            case .notStarted(let error):
                throw ImagoError(
                    .codecUnavailable("PDF is not available: \(rawValue) could not be started (\(String(cString: strerror(error))))"), url: nil,
                    stage: .decoding)
            case .exited(let status, let output):
                guard status == 0 else { throw ImagoError.invalid(.pdf, Self.failure(rawValue, status: Int(status))) }
                return output
            }
        }

        /// What a poppler-utils exit status means.
        static func failure(_ tool: String, status: Int) -> String {
            switch status {
            case 1: "Poppler could not open the document"
            case 3: "the document does not allow it to be rendered"
            case -9, -6, -11: "\(tool) stopped (signal \(-status)): the document needs more memory than allowed, or is damaged"
            case ..<0: "\(tool) stopped (signal \(-status))"
            default: "\(tool) failed (exit status \(status))"
            }
        }
    }
#endif
