import Foundation

/// Progress and previews while a transfer's bytes arrive.
extension ImagePipeline {
    func reportProgress(of transferID: UInt64, received: Int64, expected: Int64?) {
        let (members, wantsPreviews) = state.withLock { ($0.transfers.members(of: transferID), $0.transfers.wantsPreviews(transferID)) }
        for member in members.values {
            member.handle.reportProgress(received: received, expected: expected, url: member.request.url)
        }
        if wantsPreviews { startPreview(of: transferID) }
    }

    /// Decodes a preview from the bytes so far, off the loader's task, when the interval has passed
    /// and no other preview of the transfer is being made.
    func startPreview(of transferID: UInt64) {
        let job = state.withLock { state in
            state.transfers.beginPreview(
                transferID, now: .now, interval: configuration.previewInterval,
                newDecoder: PreviewDecoder(decoders: decoders, options: configuration.decodingOptions))
        }
        guard let (startingDecoder, download) = job else { return }
        let data = download.sink.snapshot
        cpuStage.submit(priority: .veryLow) { [self] in
            var decoder = startingDecoder
            let image = decoder.preview(of: data)
            let (members, again) = state.withLock { state in
                state.transfers.endPreview(transferID, decoder: decoder, made: image != nil, now: .now)
            }
            defer { if again { startPreview(of: transferID) } }
            guard let image else { return }
            // Each variant's previews are resized and processed like its final image, once per variant.
            var variants: [ImageRequest.CacheKey: Image?] = [:]
            for member in members {
                let request = member.request
                let key = request.cacheKey
                if variants[key] == nil {
                    let steps = (request.thumbnail.map { [$0.resize] } ?? []) + request.processors
                    variants[key] = try? process(image, with: steps, url: request.url).get()
                }
                guard case .image(let task) = member.handle, let processed = variants[key] ?? nil else { continue }
                task.reportPreview(
                    ImageResponse(
                        request: request, image: processed, data: data, url: request.url,
                        statusCode: nil, headers: [:], source: .network, isPreview: true
                    ))
            }
        }
    }
}
