import CProcessMemory
import Foundation

/// Where the process's memory is, read when `/metrics` is asked: the resident set by kind (the
/// kernel's `/proc/self/status`) and glibc's heap (mallinfo2), so a growing RSS can be told apart:
/// memory in use, freed memory the allocator keeps, or mapped files.
struct ProcessMemory: Sendable {
    /// Resident anonymous memory (the heap, stacks, NIO's buffers): `RssAnon`.
    var residentAnonymous: Int64 = 0
    /// Resident pages of mapped files (the binary, its libraries, the disk cache's index): `RssFile`.
    var residentFile: Int64 = 0
    /// glibc's arenas: bytes taken from the system.
    var heapArena: Int64 = 0
    /// Bytes the arenas hold for allocations in use.
    var heapInUse: Int64 = 0
    /// Freed bytes the arenas keep (fragmentation, or memory to reuse).
    var heapFreeHeld: Int64 = 0
    /// Large allocations mapped on their own, returned to the system when freed.
    var heapMapped: Int64 = 0

    /// The numbers now.
    static func now() -> ProcessMemory {
        var memory = ProcessMemory()
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        memory.residentAnonymous = kilobytes("RssAnon", in: status)
        memory.residentFile = kilobytes("RssFile", in: status)
        let heap = imago_heap()
        memory.heapArena = Int64(heap.arena)
        memory.heapInUse = Int64(heap.in_use)
        memory.heapFreeHeld = Int64(heap.free_held)
        memory.heapMapped = Int64(heap.mmapped)
        return memory
    }

    /// A `Name:   1234 kB` line of `/proc/self/status`, in bytes; 0 when it is not there.
    static func kilobytes(_ name: String, in status: String) -> Int64 {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
        let number = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int64($0) } ?? 0
        return number * 1024
    }
}
