import DAVXML
import NIOCore

extension ByteBuffer {
    /// A buffer holding a copy of rendered XML, to send.
    init(xml: borrowing XMLBytes) {
        self = xml.withUnsafeBytes { ByteBuffer(bytes: $0) }
    }
}
