import Crypto
import DurableFiles
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Where staged uploads live on the gateway's disk: `uploads/` in the
/// domain's cache folder, one `KEY.part` (the bytes, sparse where pieces
/// are missing) and one `KEY.json` (the `StagedUpload`) each. The key is a
/// hash of user and path, so no client string reaches the file system, and
/// a user's next piece finds the upload without a scan. Both files are
/// fsynced before a piece is acknowledged: a restart loses nothing received.
struct UploadStaging: Sendable {
    let folder: URL
    /// The keys of the uploads staged now, so a HEAD or a PUT asks the disk
    /// only when there is one (almost never).
    private let keys = NIOLockedValueBox(Set<String>())

    init(cacheFolder: URL) throws {
        folder = cacheFolder.appendingPathComponent("uploads", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let found = Set(all().map(\.key))
        keys.withLockedValue { $0 = found }
    }

    var isEmpty: Bool { keys.withLockedValue { $0.isEmpty } }

    func contains(_ key: String) -> Bool { keys.withLockedValue { $0.contains(key) } }

    static func key(path: ItemPath, principal: String) -> String {
        let text = principal + "\0" + path.joined(separator: "/")
        return SHA256.hash(data: Data(text.utf8)).prefix(16).hexEncoded()
    }

    func partFile(_ key: String) -> URL { folder.appendingPathComponent(key + ".part") }
    private func recordFile(_ key: String) -> URL { folder.appendingPathComponent(key + ".json") }

    /// The upload staged under `key`; nil when none (or its record is
    /// unreadable, which only a crash between its files can leave).
    func load(_ key: String) -> StagedUpload? {
        guard contains(key), let data = try? Data(contentsOf: recordFile(key)) else { return nil }
        return try? JSONDecoder().decode(StagedUpload.self, from: data)
    }

    /// Records `upload` durably, after its bytes were synced.
    func save(_ upload: StagedUpload, key: String) async throws {
        let data = try JSONEncoder().encode(upload), path = recordFile(key).path
        do {
            _ = try await blocking { try AtomicFile.replace(path, with: data, mode: 0o600) }
        } catch {
            throw ProviderError.local("cannot record the staged upload: \(error)")
        }
        keys.withLockedValue { _ = $0.insert(key) }
    }

    func remove(_ key: String) {
        keys.withLockedValue { _ = $0.remove(key) }
        unlink(recordFile(key).path)
        unlink(partFile(key).path)
    }

    /// Every staged upload on disk, with its key.
    func all() -> [(key: String, upload: StagedUpload)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            let key = String(name.dropLast(5))
            guard let data = try? Data(contentsOf: recordFile(key)),
                  let upload = try? JSONDecoder().decode(StagedUpload.self, from: data) else { return nil }
            return (key, upload)
        }
    }

    /// Removes part files last written before `cutoff` whose record a
    /// crash lost (a part being begun now is younger).
    func removeOrphanParts(before cutoff: Date) {
        let live = Set(all().map(\.key))
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasSuffix(".part") {
            let path = folder.appendingPathComponent(name).path
            var st = stat()
            guard !live.contains(String(name.dropLast(5))), lstat(path, &st) == 0,
                  TimeInterval(st.st_mtim.tv_sec) < cutoff.timeIntervalSince1970 else { continue }
            unlink(path)
        }
    }
}
