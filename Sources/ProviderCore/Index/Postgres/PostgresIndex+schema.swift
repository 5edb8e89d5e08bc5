import Foundation
import PostgresNIO

/// The shared index's schema: SQLite's v15 as one baseline (`pg1`), with
/// what PostgreSQL needs said differently:
/// - names sort by byte (`COLLATE "C"`), as SQLite's BINARY does, so pages
///   of a PROPFIND come in the same order whatever the database's locale;
/// - dates stay epoch seconds in `double precision`: the round trip is
///   exact, and listings compare them for equality;
/// - change numbers come from `feed.last_seq` inside the writing
///   transaction, not from a sequence: a sequence's numbers are handed out
///   in call order, not commit order, and a sync token could then skip a
///   change that commits later under a lower number;
/// - triggers are plpgsql functions; their work is SQLite's.
/// Three instances starting together migrate one at a time (an advisory lock).
extension PostgresIndex {
    /// Each step once, in order, in a transaction of its own: `pg1` is
    /// SQLite's v15, `pg2` what instances share to coordinate.
    static let migrations: [(version: String, statements: [String])] = [("pg1", baseline), ("pg2", coordination)]
    static var schemaVersion: String { migrations.last!.version }
    /// Advisory lock keys are (class, key) pairs; see docs/scale-out.md.
    static let migrationLock: Int32 = 7

    func migrate() async throws {
        try await withMigrationLock { transaction in
            try await transaction.execute("CREATE TABLE IF NOT EXISTS schema_version (version text PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())")
            let applied = try await transaction.rows("SELECT version FROM schema_version").map { try $0.decode(String.self) }
            for (version, statements) in Self.migrations where !applied.contains(version) {
                try await transaction.execute("BEGIN")
                do {
                    for statement in statements { try await transaction.execute(PostgresQuery(unsafeSQL: statement)) }
                    try await transaction.execute("INSERT INTO schema_version (version) VALUES (\(version))")
                    try await transaction.execute("COMMIT")
                } catch {
                    await transaction.rollBack()
                    throw error
                }
                self.logger.info("index schema migrated", metadata: ["database": "\(self.location)", "version": "\(version)"])
            }
        }
    }

    /// For an index opened only to read: its schema must be this davgate's.
    func checkSchema() async throws {
        let current = try await read { transaction in
            // No table at all: a database davgate never set up.
            let table = try await transaction.first("SELECT to_regclass('schema_version')::text", as: String?.self) ?? nil
            guard table != nil else { return String?.none }
            return try await transaction.first("SELECT version FROM schema_version WHERE version = \(Self.schemaVersion)", as: String.self)
        }
        guard current != nil else { throw MetadataIndex.IndexVersionError(location: location.description) }
    }

    private func withMigrationLock(_ body: @Sendable @escaping (PostgresTransaction) async throws -> Void) async throws {
        try await read { transaction in
            try await transaction.execute("SELECT pg_advisory_lock(\(Self.migrationLock), 0)")
            do {
                try await body(transaction)
            } catch {
                try? await transaction.execute("SELECT pg_advisory_unlock(\(Self.migrationLock), 0)")
                throw error
            }
            try await transaction.execute("SELECT pg_advisory_unlock(\(Self.migrationLock), 0)")
        }
    }

    /// One statement each: the extended protocol takes one at a time.
    static let baseline: [String] = [
        """
        CREATE TABLE item (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            domain text NOT NULL,
            parent_id bigint REFERENCES item(id) ON DELETE CASCADE,
            name text COLLATE "C" NOT NULL,
            is_folder boolean NOT NULL,
            size bigint NOT NULL DEFAULT 0,
            modified double precision NOT NULL,
            created double precision NOT NULL,
            content_version bigint NOT NULL DEFAULT 1,
            upstream_version text,
            cached_version text,
            executable boolean NOT NULL DEFAULT false,
            listed_at double precision,
            listed_version text,
            checksum text,
            checksum_version bigint,
            state text NOT NULL DEFAULT 'placeholder',
            seen bigint,
            tree_version bigint NOT NULL DEFAULT 0,
            content_policy text)
        """,
        "CREATE UNIQUE INDEX item_by_parent_name ON item(parent_id, name)",
        "CREATE UNIQUE INDEX item_root ON item(domain) WHERE parent_id IS NULL",
        "CREATE INDEX item_by_state ON item(domain, state)",
        """
        CREATE TABLE dead_property (
            seq bigint GENERATED ALWAYS AS IDENTITY,
            item_id bigint NOT NULL REFERENCES item(id) ON DELETE CASCADE,
            namespace text NOT NULL,
            name text NOT NULL,
            xml text NOT NULL,
            PRIMARY KEY (item_id, namespace, name))
        """,
        """
        CREATE TABLE lock (
            token text PRIMARY KEY,
            item_id bigint NOT NULL REFERENCES item(id) ON DELETE CASCADE,
            depth_infinity boolean NOT NULL,
            exclusive boolean NOT NULL,
            owner_xml text,
            principal text NOT NULL,
            timeout integer,
            expires double precision,
            created_item boolean NOT NULL DEFAULT false,
            upstream_token text)
        """,
        "CREATE INDEX lock_by_item ON lock(item_id)",
        "CREATE INDEX lock_by_expiry ON lock(expires)",
        """
        CREATE TABLE journal (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            domain text NOT NULL,
            item_id bigint NOT NULL REFERENCES item(id) ON DELETE CASCADE,
            file text NOT NULL,
            size bigint NOT NULL,
            basis text,
            created double precision NOT NULL,
            attempts integer NOT NULL DEFAULT 0,
            next_attempt double precision NOT NULL,
            last_error text,
            failed boolean NOT NULL DEFAULT false,
            reached boolean NOT NULL DEFAULT false,
            content bytea)
        """,
        "CREATE INDEX journal_by_item ON journal(item_id, seq)",
        """
        CREATE TABLE feed (
            id integer PRIMARY KEY CHECK (id = 1),
            identity text NOT NULL,
            compacted_through bigint NOT NULL DEFAULT 0,
            last_seq bigint NOT NULL DEFAULT 0)
        """,
        "INSERT INTO feed (id, identity) VALUES (1, substr(md5(random()::text || clock_timestamp()::text), 1, 16))",
        """
        CREATE TABLE change (
            seq bigint PRIMARY KEY,
            domain text NOT NULL,
            item_id bigint NOT NULL,
            parent_id bigint NOT NULL,
            name text COLLATE "C" NOT NULL,
            kind text NOT NULL,
            at double precision NOT NULL DEFAULT extract(epoch FROM clock_timestamp()))
        """,
        "CREATE INDEX change_by_parent ON change(parent_id, seq)",
        "CREATE INDEX change_by_domain ON change(domain, seq)",
        """
        CREATE TABLE upstream_feed (
            domain text PRIMARY KEY,
            position text NOT NULL,
            covers_since double precision NOT NULL)
        """,
        """
        CREATE TABLE trash_entry (
            domain text NOT NULL,
            name text COLLATE "C" NOT NULL,
            deleted_at double precision NOT NULL,
            size bigint NOT NULL,
            sidecar bytea NOT NULL,
            PRIMARY KEY (domain, name))
        """,
        // The feed's number for a change is taken in the writing
        // transaction, under the row lock every writer holds already.
        """
        CREATE FUNCTION record_change(d text, i bigint, p bigint, n text, k text) RETURNS void AS $$
        DECLARE s bigint;
        BEGIN
            UPDATE feed SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq INTO s;
            INSERT INTO change (seq, domain, item_id, parent_id, name, kind) VALUES (s, d, i, p, n, k);
        END $$ LANGUAGE plpgsql
        """,
        """
        CREATE FUNCTION change_item_new() RETURNS trigger AS $$
        BEGIN PERFORM record_change(NEW.domain, NEW.id, NEW.parent_id, NEW.name, 'new'); RETURN NULL; END $$ LANGUAGE plpgsql
        """,
        """
        CREATE TRIGGER change_item_new AFTER INSERT ON item FOR EACH ROW
            WHEN (NEW.parent_id IS NOT NULL) EXECUTE FUNCTION change_item_new()
        """,
        """
        CREATE FUNCTION change_item_removed() RETURNS trigger AS $$
        BEGIN PERFORM record_change(OLD.domain, OLD.id, OLD.parent_id, OLD.name, 'removed'); RETURN NULL; END $$ LANGUAGE plpgsql
        """,
        """
        CREATE TRIGGER change_item_removed AFTER DELETE ON item FOR EACH ROW
            WHEN (OLD.parent_id IS NOT NULL) EXECUTE FUNCTION change_item_removed()
        """,
        """
        CREATE FUNCTION change_item_moved() RETURNS trigger AS $$
        BEGIN
            PERFORM record_change(OLD.domain, OLD.id, OLD.parent_id, OLD.name, 'removed');
            PERFORM record_change(NEW.domain, NEW.id, NEW.parent_id, NEW.name, 'new');
            RETURN NULL;
        END $$ LANGUAGE plpgsql
        """,
        """
        CREATE TRIGGER change_item_moved AFTER UPDATE OF parent_id, name ON item FOR EACH ROW
            WHEN (OLD.parent_id IS NOT NULL AND (OLD.parent_id IS DISTINCT FROM NEW.parent_id OR OLD.name IS DISTINCT FROM NEW.name))
            EXECUTE FUNCTION change_item_moved()
        """,
        """
        CREATE FUNCTION change_item_changed() RETURNS trigger AS $$
        BEGIN PERFORM record_change(NEW.domain, NEW.id, NEW.parent_id, NEW.name, 'changed'); RETURN NULL; END $$ LANGUAGE plpgsql
        """,
        """
        CREATE TRIGGER change_item_changed AFTER UPDATE OF content_version, size, executable ON item FOR EACH ROW
            WHEN (NEW.parent_id IS NOT NULL AND OLD.parent_id IS NOT DISTINCT FROM NEW.parent_id AND OLD.name IS NOT DISTINCT FROM NEW.name
                AND (OLD.content_version IS DISTINCT FROM NEW.content_version OR OLD.size IS DISTINCT FROM NEW.size
                     OR OLD.executable IS DISTINCT FROM NEW.executable))
            EXECUTE FUNCTION change_item_changed()
        """,
        """
        CREATE TRIGGER change_item_policy AFTER UPDATE OF content_policy ON item FOR EACH ROW
            WHEN (NEW.parent_id IS NOT NULL AND OLD.content_policy IS DISTINCT FROM NEW.content_policy)
            EXECUTE FUNCTION change_item_changed()
        """,
        """
        CREATE FUNCTION change_property() RETURNS trigger AS $$
        DECLARE target bigint;
        BEGIN
            IF TG_OP = 'DELETE' THEN target := OLD.item_id; ELSE target := NEW.item_id; END IF;
            PERFORM record_change(domain, id, parent_id, name, 'changed') FROM item WHERE id = target AND parent_id IS NOT NULL;
            RETURN NULL;
        END $$ LANGUAGE plpgsql
        """,
        "CREATE TRIGGER change_property AFTER INSERT OR UPDATE OR DELETE ON dead_property FOR EACH ROW EXECUTE FUNCTION change_property()",
        // Folder versions that move: every change raises the tree version
        // of its folder and of each folder above.
        """
        CREATE FUNCTION change_raises_tree_versions() RETURNS trigger AS $$
        BEGIN
            UPDATE item SET tree_version = NEW.seq WHERE id IN (
                WITH RECURSIVE above(id) AS (
                    SELECT NEW.parent_id
                    UNION ALL
                    SELECT item.parent_id FROM item JOIN above ON item.id = above.id WHERE item.parent_id IS NOT NULL)
                SELECT id FROM above);
            RETURN NULL;
        END $$ LANGUAGE plpgsql
        """,
        "CREATE TRIGGER change_raises_tree_versions AFTER INSERT ON change FOR EACH ROW EXECUTE FUNCTION change_raises_tree_versions()",
    ]

    /// What instances share to coordinate: each domain's namespace clock
    /// (`NamespaceStamp`), and who is running (`InstanceStatus`).
    static let coordination: [String] = [
        "CREATE TABLE domain_state (domain text PRIMARY KEY, generation bigint NOT NULL DEFAULT 0)",
        """
        CREATE TABLE instance (id text PRIMARY KEY, address text NOT NULL, started double precision NOT NULL,
            heartbeat_at double precision NOT NULL, uploads integer NOT NULL DEFAULT 0)
        """,
    ]
}
