import DurableFiles

/// The secret of a vault entry: a password, a token, an S3 secret key, as raw bytes.
///
/// Its `description`, `debugDescription` and mirror never show the bytes, so a secret that ends up
/// in a log line, an error message, `print`, `dump` or a test failure reads `<redacted>`. The bytes
/// live in one heap buffer that is overwritten with zeros when the last copy goes away, so a freed
/// secret does not linger in memory (copies the caller makes with ``withUnsafeBytes(_:)`` or
/// ``stringValue`` are the caller's to care for).
public struct VaultSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let storage: Storage

    /// A secret holding a copy of `bytes`.
    public init(bytes: some Collection<UInt8>) {
        storage = Storage(bytes)
    }

    /// A secret holding the UTF-8 bytes of `string`.
    public init(_ string: String) {
        storage = Storage(string.utf8)
    }

    /// The number of bytes in the secret.
    public var count: Int { storage.buffer.count }

    /// Calls `body` with the secret's bytes; do not let the pointer escape.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(storage.buffer))
    }

    /// The secret as a string, when its bytes are valid UTF-8 (upstream passwords and tokens are).
    public var stringValue: String? {
        String(validating: storage.buffer, as: UTF8.self)
    }

    /// Always `<redacted>`: a secret never prints.
    public var description: String { "<redacted>" }

    /// Always `<redacted>`: a secret never prints, not even in `debugPrint` or test failures.
    public var debugDescription: String { "VaultSecret(<redacted>)" }

    /// No children, so `dump` and reflection show nothing of the bytes.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// Compares in time that depends only on the lengths, not on where the bytes first differ.
    public static func == (lhs: VaultSecret, rhs: VaultSecret) -> Bool {
        let left = lhs.storage.buffer, right = rhs.storage.buffer
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<left.count { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// The heap buffer behind a secret, zeroed before it is freed.
    ///
    /// `@unchecked Sendable` is sound: the buffer is written only in `init` and `deinit`, and is
    /// read-only in between.
    private final class Storage: @unchecked Sendable {
        let buffer: UnsafeMutableBufferPointer<UInt8>

        init(_ bytes: some Collection<UInt8>) {
            buffer = .allocate(capacity: bytes.count)
            _ = buffer.initialize(from: bytes)
        }

        deinit {
            zeroize(UnsafeMutableRawBufferPointer(buffer))
            buffer.deallocate()
        }
    }
}
