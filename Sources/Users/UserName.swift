/// The rule for gateway user names, shared by every operation of ``UserStore``.
enum UserName {
    /// 1-64 ASCII letters, digits and `._-@`, not starting with `.`.
    ///
    /// ASCII only, so that one name never has two spellings (no Unicode normalization question)
    /// and a name is always safe in logs and in the Basic auth `user:password` split (no `:`).
    static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), bytes.first != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "@"):
                true
            default:
                false
            }
        }
    }
}
