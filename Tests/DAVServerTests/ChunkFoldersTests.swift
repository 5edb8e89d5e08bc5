import DavgateTestSupport
import Foundation
import Testing
@testable import DAVServer

/// Nextcloud chunked uploads on the gateway's disk: which chunk names are
/// taken, and how a folder's chunks become one file. Numbered chunks
/// (Nextcloud's chunking v2) join in their numbers' order, not their names'
/// (`10` after `2`); offset-named ones (rclone's) must tile the file from
/// byte 0, or the joined file would silently hold a hole or a doubled part.
/// The SHA-1 returned is checked against the joined bytes (Nextcloud's
/// `OC-Checksum`), and folders nobody added to are expired.
@Suite struct ChunkFoldersTests {
    /// A `ChunkFolders` over a fresh temporary root, with a folder beside
    /// it where chunks are received before `install` moves them in.
    struct Scratch {
        let base: URL
        let folders: ChunkFolders

        init(expiry: TimeInterval = 86_400) throws {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("chunks-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: base.appendingPathComponent("incoming"), withIntermediateDirectories: true)
            folders = try ChunkFolders(root: base.appendingPathComponent("uploads"), expiry: expiry)
        }

        /// A new upload folder with these chunks, installed in the order given.
        func upload(_ chunks: [(String, [UInt8])], user: String = "alice", id: String = UUID().uuidString) throws -> URL {
            let folder = folders.folder(user: user, id: id)
            #expect(try folders.create(folder))
            for (name, bytes) in chunks { try install(bytes, as: name, in: folder) }
            return folder
        }

        @discardableResult
        func install(_ bytes: [UInt8], as name: String, in folder: URL) throws -> Bool {
            let received = base.appendingPathComponent("incoming").appendingPathComponent(UUID().uuidString)
            try Data(bytes).write(to: received)
            return try folders.install(received, as: name, in: folder)
        }

        /// The folder's chunks joined into a new file: its bytes, and what `assemble` said.
        func assemble(_ folder: URL) throws -> (bytes: [UInt8], count: Int64, sha1: String) {
            let file = base.appendingPathComponent("assembled-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: file) }
            let (count, sha1) = try folders.assemble(folder, into: file)
            return (Array(try Data(contentsOf: file)), count, sha1)
        }

        func cleanUp() { try? FileManager.default.removeItem(at: base) }
    }

    static func text(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// rclone's name for the chunk holding bytes `first...last`.
    static func span(_ first: Int, _ last: Int) -> String {
        String(format: "%015d-%015d", first, last)
    }

    /// Random bytes (an empty array, failing the test, if /dev/urandom cannot be read).
    static func randomBytes(_ count: Int) -> [UInt8] {
        (try? randomData(count)).map { [UInt8]($0) } ?? []
    }

    /// SHA-1 computed by coreutils, independent of the code under test.
    static func sha1sum(_ bytes: [UInt8]) throws -> String {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("sha1-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: input) }
        try Data(bytes).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha1sum")
        process.arguments = [input.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }

    @Test("chunk names are Nextcloud's numbers or rclone's FIRST-LAST offsets, nothing else", arguments: [
        ("1", true), ("00042", true), ("10000", true), ("000000000000000-000000010485759", true), ("0-9", true),
        ("123456789012345", true),
        ("", false), ("-", false), ("-1", false), ("1-", false), ("1-2-3", false), ("1234567890123456", false),
        ("1234567890123456-1", false), ("+1", false), (" 1", false), ("1.5", false), ("0x10", false), (".file", false),
        ("chunk", false), ("\u{0663}", false), ("1\u{0663}", false), ("../1", false),
    ])
    func chunkNames(name: String, valid: Bool) {
        #expect(ChunkFolders.isChunkName(name) == valid)
    }

    @Test("a folder is one per user and upload id, named without either; making it twice says it existed")
    func folders() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let folder = s.folders.folder(user: "alice", id: "upload-1")
        #expect(folder == s.folders.folder(user: "alice", id: "upload-1"))
        #expect(folder != s.folders.folder(user: "bob", id: "upload-1"))
        #expect(folder != s.folders.folder(user: "alice", id: "upload-2"))
        #expect(folder.path.hasPrefix(s.folders.root.path + "/"))
        #expect(folder.lastPathComponent.count == 32 && folder.lastPathComponent.allSatisfy(\.isHexDigit))
        #expect(!s.folders.exists(folder))
        #expect(try s.folders.create(folder))
        #expect(s.folders.exists(folder))
        #expect(try !s.folders.create(folder))
    }

    @Test("chunks are listed by name with their sizes; other names in the folder are ignored; a chunk sent again replaces the first")
    func install() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let folder = try s.upload([("2", Self.text("bb")), ("1", Self.text("a"))])
        try Data("not a chunk".utf8).write(to: folder.appendingPathComponent(".file"))
        #expect(s.folders.chunks(in: folder).map(\.name) == ["1", "2"])
        #expect(s.folders.chunks(in: folder).map(\.size) == [1, 2])
        #expect(try s.install(Self.text("AAA"), as: "1", in: folder), "replaced")
        #expect(try !s.install(Self.text("c"), as: "3", in: folder))
        #expect(s.folders.chunks(in: folder).map(\.size) == [3, 2, 1])
        #expect(try s.assemble(folder).bytes == Self.text("AAAbbc"))
    }

    @Test("numbered chunks join in their numbers' order: 1, 2, ... 10, not 1, 10, 2; a missing or doubled number is refused")
    func numbered() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let letters = Array("abcdefghij")
        let folder = try s.upload((1...10).reversed().map { (String($0), Self.text(String(letters[$0 - 1]))) })
        let joined = try s.assemble(folder)
        #expect(joined.bytes == Self.text("abcdefghij"))
        #expect(joined.count == 10)

        let abc = try s.upload([("3", Self.text("c")), ("1", Self.text("a")), ("2", Self.text("b"))], id: "abc")
        #expect(try s.assemble(abc).sha1 == "a9993e364706816aba3e25717850c26c9cd0d89d", "FIPS 180's SHA-1 of abc")

        let padded = try s.upload([("00003", Self.text("lazy ")), ("00002", Self.text("quick ")), ("00001", Self.text("the ")),
                                   ("00004", Self.text("dog"))], id: "padded")
        #expect(try s.assemble(padded).bytes == Self.text("the quick lazy dog"))

        let gap = try s.upload([("1", Self.text("a")), ("2", Self.text("b")), ("4", Self.text("d"))], id: "gap")
        #expect(throws: ChunkFolders.NotWhole.self) { try s.assemble(gap) }
        let doubled = try s.upload([("1", Self.text("a")), ("001", Self.text("A")), ("2", Self.text("b"))], id: "doubled")
        #expect(throws: ChunkFolders.NotWhole.self) { try s.assemble(doubled) }
    }

    @Test("offset-named chunks sent in any order tile the file from byte 0; the SHA-1 is the joined bytes'")
    func offsets() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let fox = Self.text("The quick brown fox jumps over the lazy dog")
        let folder = try s.upload([
            (Self.span(20, 42), Array(fox[20...42])),
            (Self.span(0, 9), Array(fox[0...9])),
            (Self.span(10, 19), Array(fox[10...19])),
        ])
        let joined = try s.assemble(folder)
        #expect(joined.bytes == fox)
        #expect(joined.count == 43)
        #expect(joined.sha1 == "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12")

        // Chunks past the 1 MiB step the bytes are copied and hashed in.
        let bytes = Self.randomBytes(3_000_001)
        let cuts = [0, 1_048_576, 1_048_577, 2_500_000, bytes.count]
        let chunks = zip(cuts, cuts.dropFirst()).map { (Self.span($0, $1 - 1), Array(bytes[$0..<$1])) }
        let big = try s.assemble(try s.upload(Array(chunks.reversed())))
        #expect(big.count == Int64(bytes.count))
        #expect(big.bytes == bytes)
        #expect(big.sha1 == (try Self.sha1sum(bytes)))
    }

    @Test("chunks that do not make one whole file are refused, and no file is made", arguments: [
        ("a gap", [(ChunkFoldersTests.span(0, 9), 10), (ChunkFoldersTests.span(20, 29), 10)]),
        ("not from byte 0", [(ChunkFoldersTests.span(10, 19), 10)]),
        ("an overlap", [(ChunkFoldersTests.span(0, 9), 10), (ChunkFoldersTests.span(5, 14), 10)]),
        ("the same start twice", [(ChunkFoldersTests.span(0, 9), 10), ("0-9", 10)]),
        ("a size unlike the name's", [(ChunkFoldersTests.span(0, 9), 10), (ChunkFoldersTests.span(10, 19), 5)]),
        ("a chunk longer than its name", [(ChunkFoldersTests.span(0, 9), 11)]),
        ("a name ending before it starts", [(ChunkFoldersTests.span(0, 9), 10), ("10-5", 0)]),
        ("numbered and offset-named mixed", [("1", 10), (ChunkFoldersTests.span(10, 19), 10)]),
        ("no chunks", []),
    ] as [(String, [(String, Int)])])
    func refused(_ why: String, chunks: [(String, Int)]) throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let folder = try s.upload(chunks.map { ($0.0, [UInt8](repeating: 120, count: $0.1)) })
        let file = s.base.appendingPathComponent("assembled")
        #expect(throws: ChunkFolders.NotWhole.self, "\(why)") { _ = try s.folders.assemble(folder, into: file) }
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("expiry removes the folders last used before the cutoff, and keeps the others")
    func expire() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let old = try s.upload([("1", Self.text("a"))], id: "old")
        let fresh = try s.upload([("1", Self.text("a"))], id: "fresh")
        let used = try s.upload([], id: "used again")
        for folder in [old, used] {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-2 * 86_400)], ofItemAtPath: folder.path)
        }
        try s.install(Self.text("b"), as: "2", in: used)
        #expect(s.folders.expire(before: Date().addingTimeInterval(-86_400)) == 1)
        #expect(!s.folders.exists(old))
        #expect(s.folders.exists(fresh))
        #expect(s.folders.exists(used), "a chunk just added counts as use")
    }

    @Test("a sweep removes expired folders, at most every ten minutes")
    func sweep() throws {
        let s = try Scratch(expiry: 3600)
        defer { s.cleanUp() }
        func abandoned(_ id: String) throws -> URL {
            let folder = s.folders.folder(user: "alice", id: id)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: folder.path)
            return folder
        }
        let first = try abandoned("first")
        let made = try s.upload([], id: "made")
        s.folders.sweepIfDue()
        #expect(!s.folders.exists(first), "the first use sweeps")
        let second = try abandoned("second")
        let again = try s.upload([], id: "again")
        s.folders.sweepIfDue()
        #expect(s.folders.exists(second), "not again within ten minutes")
        s.folders.sweepIfDue(now: Date().addingTimeInterval(601))
        #expect(!s.folders.exists(second))
        #expect(s.folders.exists(made) && s.folders.exists(again))
    }

    @Test("a join claims its folder: a second claim finds none, a release gives it back, a crash's claim returns at the next start")
    func claims() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let folder = try s.upload([("1", Self.text("a"))], id: "claimed")
        let claimed = try #require(s.folders.claim(folder))
        #expect(!s.folders.exists(folder) && s.folders.claim(folder) == nil, "a second MOVE finds no upload")
        s.folders.release(claimed, to: folder)
        #expect(s.folders.chunks(in: folder).map(\.name) == ["1"], "given back whole")
        try s.folders.announce(total: 3, in: folder)
        #expect(s.folders.announcedTotal(in: folder) == 3)
        #expect(s.folders.chunks(in: folder).map(\.name) == ["1"], "the announced length is no chunk")

        _ = try #require(s.folders.claim(folder))
        let reopened = try ChunkFolders(root: s.folders.root)
        #expect(reopened.exists(folder) && reopened.chunks(in: folder).map(\.name) == ["1"], "a join cut by a crash gives the chunks back")
    }

    @Test("numbered chunks start at 0 or 1")
    func numberedStart() throws {
        let s = try Scratch()
        defer { s.cleanUp() }
        let late = try s.upload([("2", Self.text("b")), ("3", Self.text("c"))], id: "late")
        #expect(throws: ChunkFolders.NotWhole.self) { try s.assemble(late) }
        let zero = try s.upload([("0", Self.text("a")), ("1", Self.text("b"))], id: "zero")
        #expect(try s.assemble(zero).bytes == Self.text("ab"))
    }
}
