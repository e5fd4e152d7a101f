import Foundation
import Imago

/// Stands for the app's own display code in the snippets.
@MainActor func show(_ image: Image) {}

func loading(pipeline: ImagePipeline, url: URL) async throws {
    // snippet: async-loading
    let response = try await pipeline.response(for: ImageRequest(url: url, priority: .high))
    print(response.statusCode ?? 0, response.url, response.source)  // .network, .memory, .disk, .revalidated
    let bytes = try await pipeline.data(for: ImageRequest(url: url)).data  // the bytes only, not decoded

    let task = pipeline.imageTask(with: ImageRequest(url: url))
    task.priority = .veryHigh  // re-orders the queue at once
    for await event in task.events {  // progress, previews, then finished
        if case .finished(let result) = event { print(result) }
    }
    // end snippet
    _ = bytes
}

func callbacks(url: URL) {
    // snippet: callbacks
    var configuration = ImagePipeline.Configuration()
    configuration.callbackDelivery = .mainActor  // default .immediately: on the pipeline's own threads
    let pipeline = ImagePipeline(configuration: configuration)

    let task = pipeline.imageTask(with: ImageRequest(url: url, options: .previews)) { result in
        MainActor.assumeIsolated {  // true: the pipeline delivers on the main actor
            switch result {
            case .success(let response): show(response.image)
            case .failure(let error): print(error.localizedDescription)  // "loading https://… failed: HTTP status 404"
            }
        }
    } progress: { received, expected, _ in
        print("\(received) of \(expected ?? -1) bytes")
    } preview: { preview in
        MainActor.assumeIsolated { show(preview.image) }  // progressive scans; preview.isPreview == true
    }
    task.cancel()  // completes this handle with .cancelled; the transfer stops when no handle wants it
    // end snippet
}
