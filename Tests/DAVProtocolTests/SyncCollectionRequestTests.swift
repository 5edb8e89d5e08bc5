import DAVXML
import Testing
@testable import DAVProtocol

/// The body of a sync-collection REPORT (RFC 6578 section 6.1).
@Suite struct SyncCollectionRequestTests {
    @Test func firstSyncAtDepthOne() throws {
        let root = e(.dav("sync-collection"), e(.dav("sync-token")), e(.dav("sync-level"), text: "1"),
                     e(.dav("prop"), e(.dav("getetag")), e(XMLName("urn:x", "tag"))))
        #expect(try SyncCollectionRequest.parse(root)
            == SyncCollectionRequest(token: "", infinite: false, limit: nil, properties: [.dav("getetag"), XMLName("urn:x", "tag")]))
    }

    @Test func laterSyncInfiniteWithALimit() throws {
        let root = e(.dav("sync-collection"), e(.dav("sync-token"), text: "\n  https://davgate.dev/sync/ab/7 "),
                     e(.dav("sync-level"), text: " infinite\n"), e(.dav("limit"), e(.dav("nresults"), text: "10")), e(.dav("prop")))
        #expect(try SyncCollectionRequest.parse(root)
            == SyncCollectionRequest(token: "https://davgate.dev/sync/ab/7", infinite: true, limit: 10, properties: []))
    }

    @Test func refusals() {
        let level = e(.dav("sync-level"), text: "1")
        #expect(throws: DAVRequestError.unexpectedRoot(.dav("propfind"))) { try SyncCollectionRequest.parse(e(.dav("propfind"))) }
        #expect(throws: DAVRequestError.missing("sync-token")) {
            try SyncCollectionRequest.parse(e(.dav("sync-collection"), level, e(.dav("prop"))))
        }
        #expect(throws: DAVRequestError.missing("sync-level")) {
            try SyncCollectionRequest.parse(e(.dav("sync-collection"), e(.dav("sync-token")), e(.dav("prop"))))
        }
        #expect(throws: DAVRequestError.missing("prop")) {
            try SyncCollectionRequest.parse(e(.dav("sync-collection"), e(.dav("sync-token")), level))
        }
        #expect(throws: DAVRequestError.invalid("sync-level must be 1 or infinite")) {
            try SyncCollectionRequest.parse(e(.dav("sync-collection"), e(.dav("sync-token")), e(.dav("sync-level"), text: "2"), e(.dav("prop"))))
        }
        for count in ["0", "-1", "ten", ""] {
            #expect(throws: DAVRequestError.invalid("limit must hold nresults, a positive number")) {
                try SyncCollectionRequest.parse(e(.dav("sync-collection"), e(.dav("sync-token")), level,
                                                  e(.dav("limit"), e(.dav("nresults"), text: count)), e(.dav("prop"))))
            }
        }
    }
}
