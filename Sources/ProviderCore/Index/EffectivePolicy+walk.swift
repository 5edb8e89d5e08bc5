extension EffectivePolicy {
    /// The policy that applies to each of `ids`, from the rows of a walk up
    /// the ancestor chain from each, which stops at the first policy met:
    /// the item it started from, that policy as stored, and how many steps
    /// up it was set (0: on the item itself). An item no row names neither
    /// sets nor inherits one: `lazy`, inherited. A stored policy this
    /// davgate does not know is passed over.
    static func resolved(_ ids: [Int64], walk: [(start: Int64, policy: String, depth: Int)]) -> [Int64: EffectivePolicy] {
        var result = Dictionary(uniqueKeysWithValues: ids.map { ($0, EffectivePolicy(.lazy, inherited: true)) })
        for row in walk {
            guard let policy = ContentPolicy(rawValue: row.policy) else { continue }
            result[row.start] = EffectivePolicy(policy, inherited: row.depth > 0)
        }
        return result
    }
}
