import Logging

extension ImageService {
    /// The process's memory as a log line's fields, in MiB (imgproxy's `IMGPROXY_LOG_MEM_STATS`
    /// line, with Imago's parts for its Go and libvips ones): the resident set, glibc's heap, the
    /// decodes' reservations and what the service keeps.
    public var memoryStatsMetadata: Logger.Metadata {
        let process = ProcessMemory.now()
        func mebibytes(_ bytes: some BinaryInteger) -> Logger.MetadataValue { .stringConvertible(Int64(bytes) >> 20) }
        var metadata: Logger.Metadata = [
            "resident_anon_mb": mebibytes(process.residentAnonymous), "resident_file_mb": mebibytes(process.residentFile),
            "heap_in_use_mb": mebibytes(process.heapInUse), "heap_free_held_mb": mebibytes(process.heapFreeHeld),
            "heap_mapped_mb": mebibytes(process.heapMapped), "decodes_reserved_mb": mebibytes(pipeline.configuration.decodeMemoryBudget.held),
        ]
        for (part, bytes) in memoryReport.bytes { metadata["\(part)_mb"] = mebibytes(bytes) }
        return metadata
    }
}
