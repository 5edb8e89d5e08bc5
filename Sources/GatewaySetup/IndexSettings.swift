import ProviderCore

/// The `[index]` table: where the index lives when it is shared. Without
/// it the index is `index.sqlite` in the state folder (the embedded
/// default, one process); with it, a PostgreSQL database that several
/// instances use at once (README, "Running several instances").
public struct IndexSettings: Sendable, Equatable {
    /// `url = "postgres://USER@HOST:PORT/DB?tls=require&ca=/path"`.
    public var location: PostgresLocation
    /// `credentials = { service = "...", account = "USER" }`: the vault
    /// entry holding the database password, when the server asks for one.
    public var credentials: VaultReference?

    /// The vault group of the password: reserved (`access_group` refuses
    /// the `davgate:` prefix, and no domain name has a colon), so no
    /// domain's store is ever handed it.
    public static let accessGroup = "davgate:index"

    public init(location: PostgresLocation, credentials: VaultReference? = nil) {
        self.location = location
        self.credentials = credentials
    }
}
