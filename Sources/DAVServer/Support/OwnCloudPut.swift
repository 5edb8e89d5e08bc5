import Foundation
import HTTPTypes
import ProviderCore

/// The ownCloud extensions of PUT that make rclone (vendor owncloud or
/// nextcloud) sync exactly: `X-OC-Mtime` sets the file's modification time
/// (answered with `X-OC-MTime: accepted` only when it took), and
/// `OC-Checksum: SHA1:<hex>` is checked against the bytes received.
struct OwnCloudPut {
    /// Seconds since 1970, as the client wants the file's mtime.
    let mtime: Double?
    /// The lower-case hex SHA-1 the client says it sent.
    let sha1: String?
    /// Whether the body is hashed, for `oc:checksums`: only for a client
    /// that speaks ownCloud's extensions (either header), the only kind
    /// that reads the checksum back. SHA-1 was a third of the server's CPU
    /// in a 1 GiB PUT (even with the CPU's SHA instructions), spent for
    /// clients that never ask; their files report no checksum, as a file
    /// the upstream gave does not.
    let hashesBody: Bool

    init(_ headers: HTTPFields) throws {
        if let text = headers[.init("X-OC-Mtime")!] {
            guard let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds.isFinite, seconds >= 0 else {
                throw DAVError.badRequest("X-OC-Mtime must be seconds since 1970, got \(text.debugDescription)")
            }
            mtime = seconds
        } else {
            mtime = nil
        }
        // "SHA1:<hex>", possibly beside other algorithms ("MD5:<hex> SHA1:<hex>").
        let announced = headers[.init("OC-Checksum")!]
        sha1 = announced.flatMap { value in
            value.split(separator: " ").first { $0.uppercased().hasPrefix("SHA1:") }.map { String($0.dropFirst(5)).lowercased() }
        }
        hashesBody = mtime != nil || announced != nil
    }

    /// Refuses a body whose SHA-1 is not the announced one. The requested
    /// mtime goes to the provider with the write, which gives it to the
    /// file the upstream then keeps (the directory store links the very
    /// inode; a WebDAV upstream gets `X-OC-Mtime` in turn).
    func check(_ body: BodyFileWriter.Written) throws {
        if let sha1, sha1 != body.sha1 {
            throw DAVError.badRequest("OC-Checksum says SHA1:\(sha1) but the body received has SHA1:\(body.sha1 ?? "?"); nothing was stored")
        }
    }

    /// `X-OC-MTime: accepted` when the stored item carries the requested time.
    func answer(_ item: Item, into fields: inout HTTPFields) {
        guard let mtime, abs(item.modified.timeIntervalSince1970 - mtime) < 1 else { return }
        fields[.init("X-OC-MTime")!] = "accepted"
    }
}
