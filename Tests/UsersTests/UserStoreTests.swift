import Foundation
import Testing
@testable import Users

/// A fresh folder per test, removed afterwards.
struct TemporaryFolder: ~Copyable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("davgate-users-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var usersFile: URL { url.appendingPathComponent("state/users.json") }
}

@Suite("UserStore")
struct UserStoreTests {
    @Test("add, verify, wrong password, unknown user, passwd, remove")
    func lifecycle() async throws {
        let folder = try TemporaryFolder()
        let store = try UserStore(file: folder.usersFile)
        #expect(store.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.usersFile.path), "nothing is written before a change")

        try store.add("alice", password: "correct horse")
        #expect(store.names == ["alice"])
        #expect(!store.isEmpty)
        #expect(await store.verify("alice", password: "correct horse"))
        #expect(await !store.verify("alice", password: "wrong horse"))
        #expect(await !store.verify("mallory", password: "correct horse"))
        #expect(await !store.verify("alice", password: ""))

        #expect(throws: UserStoreError.exists("alice")) { try store.add("alice", password: "x") }
        #expect(throws: UserStoreError.notFound("bob")) { try store.setPassword("bob", password: "x") }
        #expect(throws: UserStoreError.notFound("bob")) { try store.remove("bob") }
        #expect(throws: UserStoreError.emptyPassword) { try store.add("bob", password: "") }
        #expect(throws: UserStoreError.invalidPassword("it contains a NUL character")) {
            try store.add("bob", password: "a\u{0}b")
        }
        #expect(throws: UserStoreError.invalidPassword("longer than 72 bytes")) {
            try store.add("bob", password: String(repeating: "p", count: 73))
        }

        try store.setPassword("alice", password: "battery staple")
        #expect(await !store.verify("alice", password: "correct horse"), "the cached old password no longer counts")
        #expect(await store.verify("alice", password: "battery staple"))

        try store.remove("alice")
        #expect(store.isEmpty)
        #expect(await !store.verify("alice", password: "battery staple"), "the cached password of a removed user no longer counts")
    }

    @Test("names are checked", arguments: [
        "", ".hidden", "with space", "colon:x", "slash/x", "ünïcode", "tab\tname", String(repeating: "a", count: 65),
    ])
    func invalidNames(name: String) throws {
        let folder = try TemporaryFolder()
        let store = try UserStore(file: folder.usersFile)
        #expect(throws: UserStoreError.invalidName(name)) { try store.add(name, password: "x") }
        #expect(throws: UserStoreError.invalidName(name)) { try store.remove(name) }
    }

    @Test("valid names pass the name check")
    func validNames() throws {
        let folder = try TemporaryFolder()
        let store = try UserStore(file: folder.usersFile)
        // remove() checks the name before looking the user up: notFound, not invalidName, means the name is fine.
        for name in ["a", "Admin_1", "first.last", "x-y", "me@example.org", String(repeating: "a", count: 64)] {
            #expect(throws: UserStoreError.notFound(name)) { try store.remove(name) }
        }
    }

    @Test("the file persists across instances, mode 0600, no plaintext")
    func persistence() async throws {
        let folder = try TemporaryFolder()
        let password = PasswordGenerator.random()
        do {
            let store = try UserStore(file: folder.usersFile)
            try store.add("admin", password: password)
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.usersFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let bytes = try Data(contentsOf: folder.usersFile)
        #expect(bytes.range(of: Data(password.utf8)) == nil, "the password must not be in the file")
        let json = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        #expect(json["version"] as? Int == 1)
        let users = try #require(json["users"] as? [[String: Any]])
        #expect(users.count == 1)
        #expect(users.first?["name"] as? String == "admin")
        #expect((users.first?["bcrypt"] as? String)?.hasPrefix("$2b$12$") == true)
        #expect(users.first?["created"] is String)

        let reopened = try UserStore(file: folder.usersFile)
        #expect(reopened.names == ["admin"])
        #expect(await reopened.verify("admin", password: password))
        // No temporary file left behind.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.usersFile.deletingLastPathComponent().path)
        #expect(leftovers.sorted() == ["users.json", "users.json.lock"])
    }

    @Test("a cached success is far faster than bcrypt")
    func cacheIsFast() async throws {
        let folder = try TemporaryFolder()
        let store = try UserStore(file: folder.usersFile)
        try store.add("carol", password: "hunter2")
        let clock = ContinuousClock()
        var first = false
        var second = false
        let bcryptTime = await clock.measure { first = await store.verify("carol", password: "hunter2") }
        let cachedTime = await clock.measure { second = await store.verify("carol", password: "hunter2") }
        #expect(first && second)
        #expect(cachedTime * 20 < bcryptTime, "cached \(cachedTime), bcrypt \(bcryptTime)")
        // A failure is never cached: a wrong password costs bcrypt again.
        let failedTime = await clock.measure { second = await store.verify("carol", password: "hunter3") }
        #expect(!second)
        #expect(failedTime > cachedTime * 20)
        // An unknown name costs a bcrypt verify too (against a dummy verifier): no timing oracle for names.
        let unknownTime = await clock.measure { second = await store.verify("nobody", password: "hunter2") }
        #expect(!second)
        #expect(unknownTime > cachedTime * 20, "unknown \(unknownTime), cached \(cachedTime)")
    }

    @Test("eight connections logging in at once with one password pay one bcrypt; a wrong one at once pays one too and fails")
    func concurrentLoginsShareOneBcrypt() async throws {
        let folder = try TemporaryFolder()
        let store = try UserStore(file: folder.usersFile)
        try store.add("erin", password: "many connections")
        for (password, expected) in [("many connections", true), ("wrong", false)] {
            let before = store.bcryptVerifications
            let answers = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { await store.verify("erin", password: password) } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(answers == Array(repeating: expected, count: 8))
            #expect(store.bcryptVerifications - before == 1, "\(password): \(store.bcryptVerifications - before) bcrypt runs")
        }
        // A failure is not remembered: the next try pays bcrypt again.
        #expect(await !store.verify("erin", password: "wrong"))
        #expect(await store.verify("erin", password: "many connections"))
    }

    @Test("a change written by another instance (another process) is seen")
    func reloadsChangesFromOtherWriters() async throws {
        let folder = try TemporaryFolder()
        let server = try UserStore(file: folder.usersFile)
        try server.add("dave", password: "one")
        #expect(await server.verify("dave", password: "one"))

        let commandLine = try UserStore(file: folder.usersFile)
        try commandLine.add("erin", password: "two")
        try commandLine.setPassword("dave", password: "three")
        #expect(commandLine.names == ["dave", "erin"], "the writer kept the user the first instance added")

        // The server checks the file at most once a second.
        try await Task.sleep(for: .milliseconds(1100))
        #expect(server.names == ["dave", "erin"])
        #expect(await server.verify("erin", password: "two"))
        #expect(await !server.verify("dave", password: "one"), "the cached old password stopped counting")
    }

    @Test("a damaged or newer file is refused at open")
    func refusesForeignFiles() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("users.json")
        try Data("not json".utf8).write(to: file)
        #expect(throws: UserStoreError.self) { try UserStore(file: file) }
        try Data(#"{"version":2,"users":[]}"#.utf8).write(to: file)
        do {
            _ = try UserStore(file: file)
            Issue.record("a newer file was accepted")
        } catch {
            #expect(error.description.contains("newer davgate"))
        }
    }

    @Test("generated passwords are base62 of the asked length and differ")
    func passwordGenerator() {
        let a = PasswordGenerator.random()
        let b = PasswordGenerator.random()
        #expect(a.count == 20)
        #expect(a != b)
        #expect(PasswordGenerator.random(length: 7).count == 7)
        let base62 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        #expect(a.allSatisfy(base62.contains))
    }
}
