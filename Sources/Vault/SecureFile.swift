import DurableFiles
import Foundation

/// Reading and writing the files that hold key material: the vault and the key file.
///
/// The file work is DurableFiles' (reads check the permissions of the descriptor actually read,
/// writes replace the whole file atomically); this is where its errors become ``VaultError``s,
/// with the vault's own messages. Files are written with mode 0600.
enum SecureFile {
    /// The largest file read: far above any real vault, small enough that a wrong path (a disk
    /// image, a log) is refused instead of read into memory.
    static let maximumSize = 64 << 20

    /// Reads the whole private file at `path`, refusing it when group or others may read it.
    /// - Parameter missing: the error when there is no such file (no vault, no key file).
    /// - Returns: the bytes and the stamp of the file read.
    static func readPrivate(_ path: String, missing: VaultError) throws(VaultError) -> (bytes: [UInt8], stamp: FileStamp) {
        do {
            return try PrivateFile.read(path, maximumSize: maximumSize)
        } catch {
            switch error {
            case .missing:
                throw missing
            case .notRegularFile(let path):
                throw .io(path: path, call: "open", reason: "not a regular file")
            case .readableByOthers(let path, let mode):
                throw .readableByOthers(path: path, mode: mode)
            case .tooLarge(let path, _):
                throw .io(path: path, call: "read", reason: "larger than \(maximumSize >> 20) MiB, not a vault or key file")
            case .systemCall(let failure):
                throw vaultError(failure)
            }
        }
    }

    /// The stamp of the file at `path`, or nil when there is none.
    static func stamp(_ path: String) throws(VaultError) -> FileStamp? {
        do {
            return try FileStamp.of(path)
        } catch {
            throw vaultError(error)
        }
    }

    /// Replaces (or creates) `path` with `bytes`, mode 0600. Readers see the old vault or the new
    /// one, never a mix; a crash leaves one or the other whole. With `exclusive`, refuses with
    /// `alreadyExists` when `path` exists, so two `vault init` at once cannot both win.
    /// - Returns: the stamp of the new file.
    @discardableResult
    static func replace(_ path: String, with bytes: [UInt8], exclusive: Bool = false) throws(VaultError) -> FileStamp {
        do {
            return try AtomicFile.replace(path, with: bytes, mode: 0o600, exclusive: exclusive)
        } catch {
            if exclusive, error.refusedExistingFile { throw .alreadyExists(path: path) }
            throw vaultError(error)
        }
    }

    private static func vaultError(_ failure: SystemCallError) -> VaultError {
        .io(path: failure.path, call: failure.call, reason: failure.reason)
    }
}
