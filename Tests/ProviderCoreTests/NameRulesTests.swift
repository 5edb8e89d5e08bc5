import Foundation
import ProviderCore
import Testing

@Suite("NameRules")
struct NameRulesTests {
    @Test("names within the limits pass; too long a name, too long a path and control characters are named precisely")
    func violations() {
        let rules = NameRules(maxNameBytes: 10, maxPathBytes: 15)
        #expect(rules.violation(of: ["abcdefghij"]) == nil, "exactly at the limit")
        #expect(rules.violation(of: ["abcdefghijk"]) == .nameTooLong(name: "abcdefghijk", bytes: 11, limit: 10))
        #expect(rules.violation(of: ["ééééé", "é"]) == nil, "10 + 1 + 2 bytes")
        #expect(rules.violation(of: ["éééééé"]) == .nameTooLong(name: "éééééé", bytes: 12, limit: 10), "bytes, not characters")
        #expect(rules.violation(of: ["abcdefgh", "abcdefg"]) == .pathTooLong(bytes: 16, limit: 15), "names joined by one slash")
        #expect(rules.violation(of: ["a\nb"]) == .controlCharacter(name: "a\nb", code: 0x0A))
        #expect(rules.violation(of: ["x", "a\u{7F}"]) == .controlCharacter(name: "a\u{7F}", code: 0x7F))
        #expect(rules.violation(of: ["tab\there"]) == .controlCharacter(name: "tab\there", code: 0x09))
        #expect(rules.violation(of: ["ok \u{80}"]) == nil, "C1 and everything above U+007F is text")
        #expect(NameViolation.nameTooLong(name: "n", bytes: 300, limit: 255).description.contains("at most 255 bytes"))
        #expect(NameViolation.controlCharacter(name: "a\rb", code: 0x0D).description.contains("U+000D"))
    }

    @Test("a conflict copy's name fits the store's limit, keeps its extension and never splits a character")
    func conflictNamesFit() {
        let date = Date(timeIntervalSince1970: 1_790_000_000)
        #expect(Provider.conflictName(for: "report.pdf", at: date).hasPrefix("report (conflicted copy "))
        let long = String(repeating: "é", count: 120) + ".txt"   // 244 bytes
        let name = Provider.conflictName(for: long, at: date, maxBytes: 255)
        #expect(name.utf8.count <= 255)
        #expect(name.hasSuffix(").txt") && name.hasPrefix("éé"))
        #expect(name.unicodeScalars.allSatisfy { $0 == "é" || $0.isASCII }, "no character cut in half")
        #expect(NameRules(maxNameBytes: 255).violation(of: [name]) == nil)
    }
}
