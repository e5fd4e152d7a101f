#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address, as connected to: what an ``AddressPolicy`` judges.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in network order: 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// Makes an address from its 4 (IPv4) or 16 (IPv6) bytes in network order; nil for other counts.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses the canonical text forms (`192.0.2.1`, `2001:db8::1`), as `inet_pton` does. Host
    /// names and other IPv4 spellings (`2130706433`, `0x7f.1`) are not addresses here: the
    /// HTTP loader resolves those with the system resolver, which reads them as `inet_aton` does.
    public init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self.bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// True for IPv4.
    public var isIPv4: Bool { bytes.count == 4 }

    /// The canonical text form.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        let text = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard text != nil else { return bytes.map(String.init).joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The IPv4 address an IPv6 address carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64
    /// `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`), else nil. (The deprecated IPv4-compatible
    /// `::a.b.c.d` is never public, whatever it carries.)
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let prefix = Array(bytes[0..<12])
        if prefix == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] || prefix == [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        if bytes[0] == 0x20, bytes[1] == 0x02 { return IPAddress(bytes: Array(bytes[2..<6])) }
        return nil
    }

    /// Whether the address is reachable on the public internet: not loopback, private (RFC 1918,
    /// IPv6 ULA), shared (CGNAT), link-local (169.254.0.0/16 holds cloud metadata services),
    /// multicast, unspecified, broadcast, reserved or documentation space, nor an IPv6 form that
    /// carries such an IPv4 address.
    public var isPublic: Bool {
        if let embedded = embeddedIPv4 { return embedded.isPublic }
        return !(isIPv4 ? Self.nonPublicIPv4 : Self.nonPublicIPv6).contains { matches($0.prefix, length: $0.length) }
    }

    /// Whether the address is loopback or unspecified (`127.0.0.0/8`, `0.0.0.0/8`, `::1`, `::`), or
    /// an IPv6 form carrying such an IPv4 address.
    public var isLoopback: Bool {
        if let embedded = embeddedIPv4 { return embedded.isLoopback }
        if isIPv4 { return bytes[0] == 127 || bytes[0] == 0 }
        return bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] <= 1
    }

    /// Whether the address is link-local (`169.254.0.0/16`, where cloud metadata services
    /// answer; `fe80::/10`; link-local multicast `224.0.0.0/24`, `ff02::/16`), or an IPv6 form
    /// carrying such an IPv4 address.
    public var isLinkLocal: Bool {
        if let embedded = embeddedIPv4 { return embedded.isLinkLocal }
        if isIPv4 { return (bytes[0] == 169 && bytes[1] == 254) || (bytes[0] == 224 && bytes[1] == 0 && bytes[2] == 0) }
        return (bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80) || (bytes[0] == 0xFF && bytes[1] & 0x0F == 0x02)
    }

    /// Whether the address is in a private network: RFC 1918 (`10/8`, `172.16/12`, `192.168/16`),
    /// shared CGNAT space (`100.64/10`) or an IPv6 unique local address (`fc00::/7`), or an IPv6
    /// form carrying such an IPv4 address.
    public var isPrivate: Bool {
        if let embedded = embeddedIPv4 { return embedded.isPrivate }
        if isIPv4 {
            return bytes[0] == 10 || (bytes[0] == 172 && bytes[1] & 0xF0 == 16) || (bytes[0] == 192 && bytes[1] == 168)
                || (bytes[0] == 100 && bytes[1] & 0xC0 == 64)
        }
        return bytes[0] & 0xFE == 0xFC
    }

    /// Whether the address is in `network`/`prefixLength` (same family; a length past the
    /// address's bits is false).
    func isIn(network: IPAddress, prefixLength: Int) -> Bool {
        bytes.count == network.bytes.count && (0...bytes.count * 8).contains(prefixLength) && matches(network.bytes, length: prefixLength)
    }

    private func matches(_ prefix: [UInt8], length: Int) -> Bool {
        for bit in 0..<length where (bytes[bit / 8] >> (7 - bit % 8)) & 1 != (prefix[bit / 8] >> (7 - bit % 8)) & 1 {
            return false
        }
        return true
    }

    private static let nonPublicIPv4: [(prefix: [UInt8], length: Int)] = [
        ([0, 0, 0, 0], 8),  // "this network", unspecified
        ([10, 0, 0, 0], 8),  // RFC 1918
        ([100, 64, 0, 0], 10),  // CGNAT shared space
        ([127, 0, 0, 0], 8),  // loopback
        ([169, 254, 0, 0], 16),  // link-local, cloud metadata
        ([172, 16, 0, 0], 12),  // RFC 1918
        ([192, 0, 0, 0], 24),  // IETF protocol assignments
        ([192, 0, 2, 0], 24),  // documentation
        ([192, 88, 99, 0], 24),  // 6to4 relay anycast
        ([192, 168, 0, 0], 16),  // RFC 1918
        ([198, 18, 0, 0], 15),  // benchmarking
        ([198, 51, 100, 0], 24),  // documentation
        ([203, 0, 113, 0], 24),  // documentation
        ([224, 0, 0, 0], 4),  // multicast
        ([240, 0, 0, 0], 4),  // reserved, broadcast
    ]

    private static let nonPublicIPv6: [(prefix: [UInt8], length: Int)] = [
        ([UInt8](repeating: 0, count: 16), 96),  // unspecified, loopback, IPv4-compatible
        ([0x01, 0] + [UInt8](repeating: 0, count: 14), 64),  // discard
        ([0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 12), 32),  // documentation
        ([0xFC] + [UInt8](repeating: 0, count: 15), 7),  // unique local
        ([0xFE, 0x80] + [UInt8](repeating: 0, count: 14), 10),  // link-local
        ([0xFE, 0xC0] + [UInt8](repeating: 0, count: 14), 10),  // site-local (deprecated)
        ([0xFF] + [UInt8](repeating: 0, count: 15), 8),  // multicast
    ]
}
