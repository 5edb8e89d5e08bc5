import DavgateTestSupport
import Foundation
import Testing

/// A listing larger than one page of the index (500 members) and than one
/// streamed piece (48 KiB): pages meet pieces at every kind of boundary,
/// and dead properties for a whole page come from one batched read.
@Suite("PROPFIND of a large folder")
struct LargeListingTests {
    static let count = 1_234

    /// Every 100th name needs percent-encoding and XML escaping.
    static func name(_ i: Int) -> String {
        i % 100 == 0 ? "m-\(String(format: "%04d", i)) ü & <x>.txt" : "m-\(String(format: "%04d", i)).txt"
    }

    @Test("1,234 members stream whole, each once with its own dead property, under allprop and under prop")
    func largeListing() async throws {
        try await withGateway { server, client in
            let folder = server.upstream.appendingPathComponent("big")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for i in 0..<Self.count {
                try Data(repeating: UInt8(i % 251), count: i % 97).write(to: folder.appendingPathComponent(Self.name(i)))
            }
            #expect(try await client.send("PROPFIND", "/files/big/", headers: [("Depth", "1")]).status == 207)
            // Every seventh member gets a property naming itself, so a value
            // handed to the wrong member of its page shows.
            for i in stride(from: 0, to: Self.count, by: 7) {
                let patch = """
                    <?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:T="urn:t"><D:set><D:prop><T:index>\(i)</T:index></D:prop></D:set></D:propertyupdate>
                    """
                let path = "/files/big/" + Self.name(i).addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-.")))!
                #expect(try await client.send("PROPPATCH", path, body: patch).status == 207)
            }

            let allprop = try await client.send("PROPFIND", "/files/big/", headers: [("Depth", "1")])
            #expect(allprop.status == 207)
            #expect(allprop.body.count > 4 * 48 * 1024, "large enough to go in several pieces")
            let members = try Self.members(allprop)
            #expect(members.count == Self.count, "every member once")
            for i in 0..<Self.count {
                let member = try #require(members[Self.name(i)], "member \(i) listed")
                #expect(member.size == String(i % 97), "member \(i)'s own size")
                #expect(member.index == (i % 7 == 0 ? String(i) : nil), "member \(i)'s own dead property")
            }

            let named = """
                <?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:T="urn:t"><D:prop><D:getcontentlength/><T:index/></D:prop></D:propfind>
                """
            let prop = try await client.send("PROPFIND", "/files/big/", headers: [("Depth", "1")], body: named)
            #expect(prop.status == 207)
            let asked = try Self.members(prop)
            #expect(asked.count == Self.count)
            for i in 0..<Self.count {
                #expect(asked[Self.name(i)]?.index == (i % 7 == 0 ? String(i) : nil), "member \(i) under prop")
            }
        }
    }

    /// Members by decoded name: their size and `T:index` found with 200.
    static func members(_ reply: DAVClient.Reply) throws -> [String: (size: String?, index: String?)] {
        let tree = try #require(XMLTree.parse(reply.body), "well-formed multistatus")
        var found: [String: (size: String?, index: String?)] = [:]
        for response in tree.all("response") {
            let href = try #require(response.child("href")?.trimmedText)
            guard href != "/files/big/" else { continue }
            let name = try #require(href.split(separator: "/").last.map(String.init)?.removingPercentEncoding)
            #expect(found[name] == nil, "\(name) listed once")
            let ok = response.all("propstat").filter { $0.child("status")?.trimmedText.contains(" 200 ") == true }
            let props = ok.compactMap { $0.child("prop") }
            found[name] = (props.compactMap { $0.child("getcontentlength")?.trimmedText }.first,
                           props.compactMap { $0.child("index", "urn:t")?.trimmedText }.first)
        }
        return found
    }
}
