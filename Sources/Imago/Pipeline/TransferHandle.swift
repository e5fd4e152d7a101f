import Foundation

/// A handle as a transfer holds it: one that wants the decoded image, or one that wants the bytes.
/// What differs between the two is only how a finished transfer completes them.
enum TransferHandle: Sendable {
    case image(ImageTask)
    case data(DataTask)

    init(_ task: ImageTask) { self = .image(task) }
    init(_ task: DataTask) { self = .data(task) }

    var id: UInt64 {
        switch self {
        case .image(let task): task.id
        case .data(let task): task.id
        }
    }

    var request: ImageRequest {
        switch self {
        case .image(let task): task.request
        case .data(let task): task.request
        }
    }

    /// Whether the handle wants the decoded image.
    var decodes: Bool {
        if case .image = self { return true }
        return false
    }

    var isFinished: Bool {
        switch self {
        case .image(let task): task.isFinished
        case .data(let task): task.isFinished
        }
    }

    func reportProgress(received: Int64, expected: Int64?, url: URL) {
        switch self {
        case .image(let task): task.reportProgress(received: received, expected: expected, url: url)
        case .data(let task): task.reportProgress(received: received, expected: expected, url: url)
        }
    }

    /// Cancels the handle as its owner would.
    func cancel() {
        switch self {
        case .image(let task): task.cancel()
        case .data(let task): task.cancel()
        }
    }

    /// Fails the handle with `error`.
    func fail(_ error: ImagoError) {
        switch self {
        case .image(let task): task.complete(with: .failure(error))
        case .data(let task): task.complete(with: .failure(error))
        }
    }
}
