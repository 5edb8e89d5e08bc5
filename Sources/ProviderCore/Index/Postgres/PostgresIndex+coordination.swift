import PostgresNIO

/// How instances on one index take turns and keep one namespace clock
/// (docs/scale-out.md section 2, rows 1, 3 and 4).
extension PostgresIndex {
    var isShared: Bool { true }

    /// How long a coordinated writer waits for another instance's: longer
    /// than any sane write-through upload, short of a hung instance.
    static let domainTurnWait = Duration.seconds(300)
    /// How long a listing refresh waits for another instance's refresh of
    /// the same folder before listing it itself.
    static let listingTurnWait = Duration.seconds(30)

    func withDomainTurn<T>(domain: String, _ body: () async throws -> T) async throws -> T {
        let turn = try await AdvisoryTurn.take(.domain, key: domain, wait: Self.domainTurnWait, on: self)
        defer { turn.end() }
        return try await body()
    }

    /// A refresh that waited past `listingTurnWait` (a slow upstream)
    /// lists the folder itself rather than fail.
    func withListingTurn<T>(folder: Int64, _ body: (_ waited: Bool) async throws -> T) async throws -> T {
        let turn: AdvisoryTurn
        do {
            turn = try await AdvisoryTurn.take(.listing, key: String(folder), wait: Self.listingTurnWait, on: self)
        } catch ProviderError.indexUnavailable(let reason) where reason.contains("55P03") {
            logger.warning("another instance's listing of a folder took over \(Self.listingTurnWait); listing it here too", metadata: ["folder": "\(folder)"])
            return try await body(true)
        }
        defer { turn.end() }
        return try await body(turn.waited)
    }

    /// The domain's generation. An odd one with no instance in the
    /// domain's turn was left by an instance killed during a change: it is
    /// made even here, or no listing would be applied until the next change.
    func namespaceStamp(domain: String) async throws -> NamespaceStamp? {
        let generation = try await read { t in
            try await t.first("SELECT generation FROM domain_state WHERE domain = \(domain)", as: Int64.self) ?? 0
        }
        let stamp = NamespaceStamp(domain: domain, generation: generation)
        guard stamp.changeRunning else { return stamp }
        let abandoned = try await read { t in
            guard try await t.first("SELECT pg_try_advisory_lock(\(AdvisoryTurn.Kind.domain.rawValue), hashtext(\(domain)))", as: Bool.self) == true
            else { return false }
            _ = try await t.rows("SELECT pg_advisory_unlock(\(AdvisoryTurn.Kind.domain.rawValue), hashtext(\(domain)))")
            return true
        }
        guard abandoned else { return stamp }
        // Only if nobody began a change since: else theirs is running.
        let mended = try await write { t in
            try await t.first("""
                UPDATE domain_state SET generation = generation + 1 WHERE domain = \(domain) AND generation = \(generation)
                RETURNING generation
                """, as: Int64.self)
        }
        if let mended {
            logger.notice("a namespace change left unfinished by a stopped instance was closed", metadata: ["domain": "\(domain)"])
            return NamespaceStamp(domain: domain, generation: mended)
        }
        return try await namespaceStamp(domain: domain)
    }

    func moveNamespaceClock(domain: String, _ move: NamespaceMove) async throws {
        let step: PostgresQuery = switch move {
        // Odd from even, and past an odd value a killed instance left.
        case .changeBegan: "UPDATE domain_state SET generation = generation + 1 + generation % 2 WHERE domain = \(domain)"
        case .changeEnded: "UPDATE domain_state SET generation = generation + 2 - generation % 2 WHERE domain = \(domain)"
        case .tick: "UPDATE domain_state SET generation = generation + 2 WHERE domain = \(domain)"
        }
        try await write { t in
            try await t.execute("INSERT INTO domain_state (domain) VALUES (\(domain)) ON CONFLICT (domain) DO NOTHING")
            try await t.execute(step)
        }
    }
}

extension PostgresTransaction {
    /// Throws `NamespaceChangedWhileListing` unless the domain's clock still
    /// reads `stamp`: inside a `write`, which holds the `feed` row every
    /// move of the clock also takes, so nothing moves it before the commit.
    func require(_ stamp: NamespaceStamp?) async throws {
        guard let stamp else { return }
        let now = try await first("SELECT generation FROM domain_state WHERE domain = \(stamp.domain)", as: Int64.self) ?? 0
        guard now == stamp.generation else { throw NamespaceChangedWhileListing() }
    }
}
