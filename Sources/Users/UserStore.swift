import Crypto
import DurableFiles
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The gateway's users: names and bcrypt verifiers in one JSON file (`users.json` in the state folder).
///
/// Users live in memory; every change is written at once, atomically and with mode 0600. Changes
/// made by another process (`davgate user add` while the server runs) are picked up by a cheap
/// `stat` of the file at most once a second. ``verify(_:password:)`` caches successes briefly, because
/// Basic auth resends the password with every request and bcrypt at cost 12 takes about 250 ms.
public final class UserStore: Sendable {
    /// The users file.
    public let file: URL

    /// How often, at most, the file is checked for changes made by another process.
    static let reloadInterval: Duration = .seconds(1)

    private struct State {
        var users: [String: UsersFile.Entry]
        /// The stamp of the file the users were read from; nil when there was no file.
        var stamp: FileStamp?
        var lastCheck: ContinuousClock.Instant
        var verified = VerifiedCredentials()
        /// bcrypt verifications running, by credential key: a client that
        /// opens eight connections at once (rclone, a file manager) pays
        /// one bcrypt, not eight, and so again each time its entry expires.
        var verifying: [Data: (verifier: String?, task: Task<Bool, Never>)] = [:]
        var bcryptVerifications = 0
    }

    private let state: NIOLockedValueBox<State>
    private let credentialKeys = VerifiedCredentials.KeyMaker(secret: SymmetricKey(size: .bits256))
    private let lockFile: String

    /// Opens the users file; a missing file is an empty store, and nothing is created until a change.
    /// - Parameter file: the users file, usually `users.json` in the state folder.
    /// - Throws: ``UserStoreError/io(_:)`` when the file exists but cannot be read or is not a users file.
    public init(file: URL) throws(UserStoreError) {
        self.file = file.standardizedFileURL
        self.lockFile = self.file.path + ".lock"
        let (users, stamp) = try Self.load(self.file)
        self.state = NIOLockedValueBox(State(users: users, stamp: stamp, lastCheck: .now))
    }

    /// Reads the file now rather than at the next check (a reload, SIGHUP)
    /// and forgets every briefly cached verification, so a password changed
    /// or a user removed by hand takes effect with the reload.
    /// - Returns: how many users the file holds.
    /// - Throws: ``UserStoreError/io(_:)`` when the file cannot be read;
    ///   the users stay as they were.
    @discardableResult
    public func reload() throws(UserStoreError) -> Int {
        let (users, stamp) = try Self.load(file)
        state.withLockedValue { state in
            state.users = users
            state.stamp = stamp
            state.lastCheck = .now
            state.verified = VerifiedCredentials()
        }
        return users.count
    }

    /// The user names, sorted.
    public var names: [String] {
        state.withLockedValue { state in
            refreshIfStale(&state)
            return state.users.keys.sorted()
        }
    }

    /// Whether there is no user at all (first start).
    public var isEmpty: Bool {
        state.withLockedValue { state in
            refreshIfStale(&state)
            return state.users.isEmpty
        }
    }

    /// Adds a user.
    ///
    /// Computes a bcrypt verifier (about 250 ms) on the calling thread: call it from the command
    /// line or from a thread of your own, not from a task on the cooperative pool.
    /// - Throws: ``UserStoreError/exists(_:)``, ``UserStoreError/invalidName(_:)``,
    ///   ``UserStoreError/emptyPassword``, ``UserStoreError/invalidPassword(_:)``, ``UserStoreError/io(_:)``.
    public func add(_ name: String, password: String) throws(UserStoreError) {
        guard UserName.isValid(name) else { throw .invalidName(name) }
        try Self.checkStorable(password)
        // Refuse before spending a bcrypt hash when the name is visibly taken; checked again under the file lock.
        if state.withLockedValue({ $0.users[name] != nil }) { throw .exists(name) }
        let entry = UsersFile.Entry(name: name, bcrypt: BcryptRunner.hash(password), created: Date())
        try modify { (users: inout [String: UsersFile.Entry]) throws(UserStoreError) in
            guard users[name] == nil else { throw .exists(name) }
            users[name] = entry
        }
    }

    /// Replaces a user's password; cached verifications of the old one stop counting at once.
    ///
    /// Computes a bcrypt verifier on the calling thread, like ``add(_:password:)``.
    /// - Throws: ``UserStoreError/notFound(_:)`` and the password and I/O errors of ``add(_:password:)``.
    public func setPassword(_ name: String, password: String) throws(UserStoreError) {
        guard UserName.isValid(name) else { throw .invalidName(name) }
        try Self.checkStorable(password)
        let verifier = BcryptRunner.hash(password)
        try modify { (users: inout [String: UsersFile.Entry]) throws(UserStoreError) in
            guard users[name] != nil else { throw .notFound(name) }
            users[name]!.bcrypt = verifier
        }
    }

    /// Removes a user; cached verifications stop counting at once.
    /// - Throws: ``UserStoreError/notFound(_:)``, ``UserStoreError/invalidName(_:)``, ``UserStoreError/io(_:)``.
    public func remove(_ name: String) throws(UserStoreError) {
        guard UserName.isValid(name) else { throw .invalidName(name) }
        try modify { (users: inout [String: UsersFile.Entry]) throws(UserStoreError) in
            guard users.removeValue(forKey: name) != nil else { throw .notFound(name) }
        }
    }

    /// Checks a name and password, as sent with Basic auth.
    ///
    /// A success is remembered until unused for 60 s (see ``VerifiedCredentials``); failures always cost a bcrypt
    /// verify, on a Dispatch queue, never on the cooperative pool. An unknown user costs the same as
    /// a wrong password, so the answer time does not tell which names exist.
    /// - Returns: true when `name` exists and `password` is its password.
    public func verify(_ name: String, password: String) async -> Bool {
        // Nothing that fails these can ever have been stored, whichever users exist.
        guard UserName.isValid(name), (try? Self.checkStorable(password)) != nil else { return false }
        let key = credentialKeys.key(name: name, password: password)
        let (verifier, cached, running) = state.withLockedValue { state -> (String?, Bool, Task<Bool, Never>?) in
            refreshIfStale(&state)
            let verifier = state.users[name]?.bcrypt
            if state.verified.use(key, verifier: verifier, now: .now) { return (verifier, true, nil) }
            if let running = state.verifying[key], running.verifier == verifier { return (verifier, false, running.task) }
            let task = Task { await BcryptRunner.verify(password, hash: verifier) }
            state.verifying[key] = (verifier, task)
            state.bcryptVerifications += 1
            return (verifier, false, task)
        }
        if cached { return true }
        guard let running else { return false }
        let verified = await running.value
        state.withLockedValue { state in
            if state.verifying[key]?.task == running { state.verifying[key] = nil }
            if verified, let verifier { state.verified.insert(key, verifier: verifier, now: .now) }
        }
        return verified
    }

    /// How many bcrypt verifications this store ran (for the tests).
    var bcryptVerifications: Int { state.withLockedValue { $0.bcryptVerifications } }

    // MARK: - File

    /// Refuses passwords that bcrypt would not store faithfully.
    private static func checkStorable(_ password: String) throws(UserStoreError) {
        guard !password.isEmpty else { throw .emptyPassword }
        // bcrypt reads a C string: everything after a NUL would be ignored.
        guard !password.utf8.contains(0) else { throw .invalidPassword("it contains a NUL character") }
        // bcrypt uses the first 72 bytes only: a longer password would match any with the same start.
        guard password.utf8.count <= 72 else { throw .invalidPassword("longer than 72 bytes") }
    }

    /// Reads the users file and its stamp from one open descriptor, so that they always agree.
    private static func load(_ file: URL) throws(UserStoreError) -> ([String: UsersFile.Entry], FileStamp?) {
        let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return ([:], nil) }
            throw .io(SystemCallError("open", file.path).description)
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let stamp: FileStamp
        let data: Data
        do {
            stamp = try FileStamp.of(descriptor: descriptor, path: file.path)
            data = try handle.readToEnd() ?? Data()
        } catch {
            throw .io("\(file.path): cannot read: \(error)")
        }
        return (try UsersFile.decode(data, file: file), stamp)
    }

    /// Re-reads the file when another process replaced it; checks at most once per ``reloadInterval``.
    ///
    /// A file that cannot be read now (being replaced, damaged by hand) leaves the users as they were
    /// and is tried again at the next check.
    private func refreshIfStale(_ state: inout State) {
        let now = ContinuousClock.now
        guard now - state.lastCheck >= Self.reloadInterval else { return }
        state.lastCheck = now
        // `try?` folds "no file" and "cannot stat" into nil; both are worth a fresh read.
        let current = try? FileStamp.of(file.path)
        if current != nil, current == state.stamp { return }
        if let (users, stamp) = try? Self.load(file) {
            state.users = users
            state.stamp = stamp
        }
    }

    /// Read-modify-write of the file under an exclusive file lock, so that no process loses another's change.
    private func modify(
        _ change: (inout [String: UsersFile.Entry]) throws(UserStoreError) -> Void
    ) throws(UserStoreError) {
        let folder = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: folder,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw .io("\(folder.path): cannot create the folder: \(error)")
        }
        try FileLock.withExclusiveLock(on: lockFile, failure: { UserStoreError.io($0.description) }) { () throws(UserStoreError) in
            var (users, _) = try Self.load(file)
            try change(&users)
            do {
                try AtomicFile.replace(file.path, with: try UsersFile.encode(users), mode: 0o600)
            } catch let failure as SystemCallError {
                throw .io(failure.description)
            } catch let failure as UserStoreError {
                throw failure
            } catch {
                throw .io("\(file.path): \(error)")
            }
            let stamp = try? FileStamp.of(file.path)
            state.withLockedValue { state in
                state.users = users
                state.stamp = stamp
                state.lastCheck = .now
            }
        }
    }
}
