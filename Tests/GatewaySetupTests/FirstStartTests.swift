import Foundation
import GatewaySetup
import Testing
import Users

@Suite("FirstStart")
struct FirstStartTests {
    @Test("an empty store gets admin with a random password, once")
    func ensureAdmin() async throws {
        let folder = try TemporaryFolder()
        let store = try UserStore(file: folder.path("var/users.json"))
        let password = try #require(try FirstStart.ensureAdmin(in: store))
        #expect(password.count == 20)
        #expect(store.names == ["admin"])
        #expect(await store.verify("admin", password: password))
        #expect(try FirstStart.ensureAdmin(in: store) == nil, "a store with users is left alone")
        #expect(store.names == ["admin"])
    }
}
