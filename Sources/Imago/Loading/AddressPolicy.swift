/// Which addresses a transfer may connect to, checked on every hop (the first request and each
/// redirect) against the address the connection is then made to.
///
/// With any policy but ``allowAll``, the HTTP loader resolves the host name itself, checks the
/// addresses, and connects to the allowed address it chose (keeping the host name for TLS and the
/// `Host` header), so no second lookup happens between
/// the check and the connection: a name that resolves to a public address once and to a private
/// one a moment later (DNS rebinding) cannot slip through.
public struct AddressPolicy: Sendable {
    private let rule: (@Sendable (IPAddress) -> Bool)?

    /// Any address: no resolution of Imago's own. The library's default.
    public static let allowAll = AddressPolicy(rule: nil)

    /// Public addresses only (``IPAddress/isPublic``): no loopback, private, CGNAT, link-local,
    /// multicast, unspecified or reserved address, nor an IPv6 form carrying one. For servers that
    /// fetch URLs their clients name.
    public static let publicOnly = AddressPolicy { $0.isPublic }

    /// Public addresses, and those of the internal kinds allowed: loopback, link-local and
    /// private-network addresses (imgproxy's `ALLOW_LOOPBACK_SOURCE_ADDRESSES`,
    /// `ALLOW_LINK_LOCAL_SOURCE_ADDRESSES`, `ALLOW_PRIVATE_SOURCE_ADDRESSES`). Multicast, reserved
    /// and documentation addresses are never allowed; all three false is ``publicOnly``.
    public static func publicAnd(loopback: Bool, linkLocal: Bool, privateNetwork: Bool) -> AddressPolicy {
        AddressPolicy { address in
            address.isPublic || (loopback && address.isLoopback) || (linkLocal && address.isLinkLocal) || (privateNetwork && address.isPrivate)
        }
    }

    /// A policy that allows the addresses `allows` returns true for.
    public init(allows: @escaping @Sendable (IPAddress) -> Bool) {
        self.rule = allows
    }

    private init(rule: (@Sendable (IPAddress) -> Bool)?) {
        self.rule = rule
    }

    /// Whether a transfer may connect to `address`.
    public func allows(_ address: IPAddress) -> Bool {
        rule?(address) ?? true
    }

    /// False for ``allowAll``: then no address needs checking.
    public var checksAddresses: Bool { rule != nil }
}
