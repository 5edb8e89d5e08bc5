import AsyncHTTPClient
import Foundation
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

extension HTTPUpstream {
    /// Body chunks are written in batches of at least this many bytes, or
    /// of what came within 5 ms (`GatheredWrites`): the GET that started a
    /// fetch waits for a chunk this size (`FileDescriptor.chunkSize` in
    /// DAVServer) anyway.
    static let gatherThreshold = 256 * 1024

    /// Writes a GET answer's body into `destination` as it arrives: without
    /// a range, the whole file into a new `destination`, made durable and
    /// checked against `size` before it counts (a new file that did not fill
    /// is removed); with a range, only those bytes at their own offsets.
    /// `bodyStart` is where the first body byte belongs (0 for a 200, the
    /// Content-Range start for a 206); bytes outside the range are read past.
    /// `progress` hears the count of this fetch's bytes in the file so far.
    static func receive(_ body: HTTPClientResponse.Body, startingAt bodyStart: Int64, into destination: URL,
                        range: ClosedRange<Int64>?, size: Int64, progress: @Sendable (Int64) -> Void) async throws {
        let whole = range == nil
        let fd = open(destination.path, O_WRONLY | O_CREAT | O_CLOEXEC | (whole ? O_EXCL : 0), 0o600)
        guard fd >= 0 else { throw DirectoryStore.error(errno) }
        var complete = false
        defer {
            close(fd)
            // A new file that did not fill is no content at all.
            if whole && !complete { unlink(destination.path) }
        }
        let first = range?.lowerBound ?? 0
        let last = range?.upperBound ?? Int64.max
        var position = bodyStart
        var written: Int64 = 0
        // A write into the page cache costs microseconds; a hop to another
        // thread would cost more.
        var gathered = GatheredWrites(threshold: Self.gatherThreshold)
        func writeGathered() throws {
            let count = gathered.count
            try gathered.write(to: fd)
            written += Int64(count)
            progress(written)
        }
        do {
            for try await chunk in body {
                let count = Int64(chunk.readableBytes)
                let from = max(position, first), to = min(position + count - 1, last)
                if from <= to {
                    let slice = chunk.getSlice(at: chunk.readerIndex + Int(from - position), length: Int(to - from + 1))!
                    if gathered.add(slice, at: from) { try writeGathered() }
                }
                position += count
                if position > last { break }
            }
            if gathered.count > 0 { try writeGathered() }
        } catch {
            // What arrived before the failure still serves the readers of
            // those bytes, as when each chunk was written on arrival.
            if gathered.count > 0 { try? writeGathered() }
            throw transportError(error)
        }
        if let range, written != Int64(range.count) {
            throw UpstreamError.io("file ended before the requested range")
        }
        if whole {
            // Like the directory store's copies: durable before it counts as content.
            try await blocking { if fsync(fd) != 0 { throw DirectoryStore.error(errno) } }
        }
        if whole && written != size {
            throw UpstreamError.io("the upstream sent \(written) of \(size) bytes")
        }
        complete = true
    }
}
