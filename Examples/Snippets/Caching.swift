import Foundation
import Imago

#if DiskCache
    func caching(url: URL) throws {
        // snippet: disk-cache
        // memory → disk → network; response.source says which: .memory, .disk, .network, .revalidated
        var configuration = ImagePipeline.Configuration()
        configuration.diskCache = try DiskCache(  // $XDG_CACHE_HOME/imago by default
            configuration: .init(directory: URL(fileURLWithPath: "/var/cache/myapp/images"), sizeLimit: 512 << 20, maxAge: .seconds(30 * 86_400)))
        let pipeline = ImagePipeline(configuration: configuration)

        var request = ImageRequest(url: url)
        request.cachePolicy = .refreshCached  // always revalidate (If-None-Match / If-Modified-Since)
        request.cachePolicy = .reloadIgnoringCache  // or .returnCacheDataDontLoad (offline), .useProtocolCachePolicy
        request.options.insert(.disableDiskCacheWrites)  // also .disableDiskCacheReads, .disableMemoryCacheReads/Writes
        request.options.insert(.storesVariantOnDisk)  // keep the processed or thumbnail variant on disk too
        configuration.diskCache?.flush()  // before exit: writes are batched in the background
        // end snippet
        _ = (pipeline, request)
    }
#endif

func errors(pipeline: ImagePipeline, url: URL) async {
    // snippet: errors
    do {
        _ = try await pipeline.image(for: url)
    } catch {  // an ImagoError: the pipeline throws nothing else
        print(error.localizedDescription)  // "loading http://127.0.0.1:1/a.jpg failed: could not connect to 127.0.0.1:1: connection refused"
        switch error.code.kind {  // a `default` is needed, so new codes never break it
        case .httpStatus where error.code.httpStatus == 404: print("missing")
        case .timedOut, .tooSlow: print("try again later")
        default: break
        }
        print(error.code.name, error.code.httpStatus ?? 0, error.url?.absoluteString ?? "", error.underlying.map { "\($0)" } ?? "")
    }
    // end snippet
}
