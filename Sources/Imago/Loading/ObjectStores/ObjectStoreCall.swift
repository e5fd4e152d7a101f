import Foundation

/// What a whole-object call to a store (a shared store of results, not a source) needs besides
/// the object: the network it goes over and how long the store may go without sending a byte.
public struct ObjectStoreCall: Sendable {
    /// The proxies and certificate authorities of the environment.
    public var network: NetworkEnvironment
    /// How long the store may go without sending a byte.
    public var timeoutWithoutBytes: Duration

    /// A call over `network` given up after `timeoutWithoutBytes` of silence.
    public init(network: NetworkEnvironment = NetworkEnvironment(), timeoutWithoutBytes: Duration = .seconds(5)) {
        (self.network, self.timeoutWithoutBytes) = (network, timeoutWithoutBytes)
    }
}
