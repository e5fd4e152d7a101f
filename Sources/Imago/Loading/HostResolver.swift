// Built with the `HTTPClientLoader` trait (on by default): AsyncHTTPClient, SwiftNIO, BoringSSL.
#if HTTPClientLoader

    import NIOPosix
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Resolves a URL's host to its addresses with the system resolver (`getaddrinfo`, on NIO's
    /// blocking-I/O thread pool), for the HTTP loader's address policy. IPv4 spellings such as
    /// `2130706433` or `0x7f.1` come back as the address they denote, as they would on connect.
    enum HostResolver {
        static func addresses(of host: String) async throws -> [IPAddress] {
            try await NIOThreadPool.singleton.runIfActive { lookUp(host) }
        }

        private static func lookUp(_ host: String) -> [IPAddress] {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            #if canImport(Glibc)
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #else
                hints.ai_socktype = SOCK_STREAM
            #endif
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
            defer { freeaddrinfo(first) }
            var addresses: [IPAddress] = []
            for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
                guard let raw = entry.pointee.ai_addr else { continue }
                switch Int32(raw.pointee.sa_family) {
                case AF_INET:
                    let address = raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    if let ip = withUnsafeBytes(of: address, { IPAddress(bytes: Array($0)) }) { addresses.append(ip) }
                case AF_INET6:
                    let address = raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    if let ip = withUnsafeBytes(of: address, { IPAddress(bytes: Array($0)) }) { addresses.append(ip) }
                default:
                    continue
                }
            }
            // getaddrinfo lists one address per socket type asked for; keep the first of each.
            var seen: Set<IPAddress> = []
            return addresses.filter { seen.insert($0).inserted }
        }
    }

#endif
