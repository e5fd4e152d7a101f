// Built with the `DiskCache` trait (on by default).
#if DiskCache

    import CXXHash
    import Foundation

    /// XXH3 (64-bit, seed 0), the checksum that tells a disk-cache payload from a torn or altered one.
    /// It hashes at over 20 GB/s, so verifying every read costs little beside the read itself.
    enum Checksum {
        static func xxh3(_ data: Data) -> UInt64 {
            data.withUnsafeBytes { xxh3($0) }
        }

        static func xxh3(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
            imago_xxh3_64(bytes.baseAddress, bytes.count)
        }
    }

#endif
