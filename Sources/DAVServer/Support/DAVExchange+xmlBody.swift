import DAVXML
import HTTPTypes
import Hummingbird
import NIOCore

extension DAVExchange {
    /// Reads an XML request body through the streaming parser, refusing a
    /// declared length over the cap with 413 before reading a byte, and an
    /// undeclared one as soon as it crosses the cap. nil for an empty body.
    func readXMLBody() async throws -> XMLElement? {
        let cap = settings.maxXMLBodyBytes
        if let length = headers[.contentLength].flatMap(Int.init), length > cap {
            throw DAVError(.contentTooLarge, "XML body of \(length) bytes is over the limit of \(cap) bytes")
        }
        var parser = XMLPushParser(limits: XMLLimits(maxBytes: cap))
        var sawBytes = false
        do {
            for try await chunk in request.body {
                guard chunk.readableBytes > 0 else { continue }
                if !sawBytes {
                    sawBytes = chunk.readableBytesView.contains { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
                }
                try chunk.withUnsafeReadableBytes { try parser.feed($0) }
            }
            guard sawBytes else { return nil }
            return try parser.finish()
        } catch let error as XMLParseError {
            switch error {
            case .tooLarge: throw DAVError(.contentTooLarge, "XML body is over the limit of \(cap) bytes")
            case .empty: return nil
            case .unsupportedEncoding: throw DAVError(.unsupportedMediaType, "\(error)")
            default: throw DAVError.badRequest("request body is not acceptable XML: \(error)")
            }
        }
    }

    /// True when the request carries a body (MKCOL must refuse one with 415).
    func hasBody() async throws -> Bool {
        if let length = headers[.contentLength].flatMap(Int.init) { return length > 0 }
        for try await chunk in request.body where chunk.readableBytes > 0 { return true }
        return false
    }
}
