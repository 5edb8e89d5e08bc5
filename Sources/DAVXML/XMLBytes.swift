/// XML being written, as UTF-8 in one growing buffer of its own.
///
/// A PROPFIND of a large folder appends some 35 pieces per member (tags,
/// values, hrefs). Appending to a `String` checks and updates its ASCII and
/// count flags and its breadcrumbs on every piece: a sixth of a Depth 1
/// listing of 10,000 files (issue 14's profile). Here an append is a
/// capacity check and a copy. Noncopyable, so the buffer has one owner and
/// is freed once.
public struct XMLBytes: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes written so far.
    public private(set) var count = 0

    public init(capacity: Int = 1024) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Appends `text`'s UTF-8 as it is (no escaping: see ``XMLEscaping``).
    public mutating func append(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) == nil {
            var native = text
            native.makeContiguousUTF8()
            append(native)
        }
    }

    /// Appends `text` escaped as character data.
    public mutating func append(escaping text: String) {
        append(XMLEscaping.text(text))
    }

    /// Appends bytes that are already UTF-8 XML.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        if let start = bytes.baseAddress { UnsafeMutableRawPointer(base + count).copyMemory(from: start, byteCount: bytes.count) }
        count += bytes.count
    }

    /// Room for `more` bytes after what is written, doubling the buffer.
    private mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        var grown = capacity * 2
        while grown < count + more { grown *= 2 }
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.update(from: base, count: count)
        base.deallocate()
        base = moved
        capacity = grown
    }

    /// Forgets the bytes from `mark` on (a mark taken from ``count``).
    public mutating func truncate(to mark: Int) {
        precondition(mark >= 0 && mark <= count, "XMLBytes.truncate: \(mark) is outside 0...\(count)")
        count = mark
    }

    /// Forgets everything written, keeping the buffer.
    public mutating func removeAll() { count = 0 }

    /// The bytes written, for the time of `body`.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// What was written, as a string.
    public var string: String {
        String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }
}
