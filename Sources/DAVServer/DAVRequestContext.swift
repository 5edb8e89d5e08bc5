import Hummingbird

import NIOCore

/// The per-request context: Hummingbird's core storage plus the channel,
/// which the handlers need for the client's address (logs) and to send
/// `100 Continue` themselves once auth and lock checks have passed.
public struct DAVRequestContext: RequestContext {
    public typealias Source = ApplicationRequestContextSource
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel

    public init(source: Source) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    public var remoteAddress: String {
        channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
