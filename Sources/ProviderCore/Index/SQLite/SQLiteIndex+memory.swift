import GRDB

extension SQLiteIndex {
    /// After a listing of 10,000 members each connection that read it keeps
    /// up to SQLite's 2 MiB page cache, and the read caches up to 4,096
    /// answers: some 11 MiB that stayed resident after the load had gone.
    /// The writer's and pool readers' caches go without waiting for their
    /// queues; each lookup connection's when it is free.
    func releaseMemory() {
        pool.releaseMemoryEventually()
        lookups.releaseMemory()
        chains.release()
        writeChains.release()
        properties.release()
    }
}
