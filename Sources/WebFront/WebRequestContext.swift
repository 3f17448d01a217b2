import Hummingbird
import NIOCore

/// The request context of every route: Hummingbird's basic one, plus the address the request
/// came from (the per-source sign-in bound needs it). Behind a reverse proxy that is the proxy's.
public struct WebRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer of the connection the request came on.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The peer's IP address as text ("?" when unknown), the key of per-source bounds.
    var source: String { remoteAddress?.ipAddress ?? "?" }
}
