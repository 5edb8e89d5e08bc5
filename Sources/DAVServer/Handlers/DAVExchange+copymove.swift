import DAVProtocol
import DAVXML
import HTTPTypes
import Hummingbird
import Logging
import ProviderCore

extension DAVExchange {
    /// COPY and MOVE (RFC 4918 sections 9.8, 9.9): Destination on this server
    /// and in this domain only (502 otherwise), Overwrite, Depth; 201 when
    /// the destination is new, 204 when it was replaced.
    func copyOrMove(isMove: Bool) async throws -> Response {
        let provider = try requireDomain()
        let method = isMove ? "MOVE" : "COPY"
        guard let raw = headers[.init("Destination")!] else {
            throw DAVError.badRequest("\(method) needs a Destination header")
        }
        let destination: DAVPath
        do {
            switch try Destination.parse(raw, requestHost: request.head.authority) {
            case .foreign:
                throw DAVError(.badGateway, "Destination \(raw) is on another server; \(method) works within one server only")
            case .local(let p, _):
                destination = unmounted(p)
            }
        } catch let error as DAVError {
            throw error
        } catch {
            throw DAVError.badRequest("invalid Destination header: \(raw)")
        }
        guard destination.segments.first == domainName, destination.segments.count > 1 else {
            throw DAVError(.badGateway, "Destination \(raw) is outside the domain \(domainName); \(method) works within one domain")
        }
        let overwrite: Bool
        do {
            overwrite = try Overwrite.parse(headers[.init("Overwrite")!])
        } catch {
            throw DAVError.badRequest("invalid Overwrite header; use T or F")
        }
        let depth = try parseDepth() ?? .infinity
        let source = try await requireItem(provider)
        guard !itemPath.isEmpty else { throw DAVError(.forbidden, "a domain's root cannot be \(isMove ? "moved" : "copied")") }
        if source.isFolder {
            if isMove && depth != .infinity { throw DAVError.badRequest("MOVE of a collection needs Depth: infinity") }
            if !isMove && depth == .one { throw DAVError.badRequest("COPY takes Depth 0 or infinity") }
        }
        let target = Array(destination.segments.dropFirst())
        if target == itemPath {
            throw DAVError(.forbidden, "source and destination are the same resource")
        }
        let submitted = try await evaluateIfHeader()
        try checkWriteConditions(source)
        // The provider checks the locks (the source's for a MOVE, a replaced
        // destination's, the parents') where the change commits.
        let conditions = writeConditions(submitted: submitted, judging: source)
        let replaced: Bool
        do {
            if isMove {
                replaced = try await provider.move(from: itemPath, to: target, overwrite: overwrite, conditions: conditions).replaced
            } else {
                replaced = try await provider.copy(from: itemPath, to: target, recursive: depth == .infinity, overwrite: overwrite,
                                                   conditions: conditions).replaced
            }
        } catch ProviderError.nameRefused(let violation) {
            throw DAVError.nameRefused(violation, inDestination: true)
        }
        return Self.response(replaced ? .noContent : .created)
    }
}
