#ifndef DAVGATE_SQLITE_TUNING_H
#define DAVGATE_SQLITE_TUNING_H

/// Turns off SQLite's memory statistics, which put one process-wide mutex
/// around every allocation SQLite makes: with the event loops reading the
/// index while the writer commits, that mutex was the most contended lock
/// of a small-PUT load (issue 14). Must run before SQLite is initialised;
/// returns SQLite's result code (SQLITE_MISUSE when it was too late).
int davgate_sqlite_disable_memory_statistics(void);

typedef struct sqlite3 sqlite3;

/// Makes the default VFS one that gathers each transaction's writes to the
/// write-ahead log into one write(2), instead of two per frame (see
/// wal_write_batching.c). Affects databases opened after it; idempotent;
/// returns SQLite's result code.
int davgate_sqlite_batch_log_writes(void);

/// For the tests: the writes to `db`'s log that SQLite asked for and the
/// ones made, on this connection; SQLITE_NOTFOUND when it has no log open
/// through the batching VFS.
int davgate_sqlite_log_writes(sqlite3 *db, long long *asked, long long *made);

/// For the tests: how many statement journals went to a temporary file in
/// this process, through the batching VFS (`PRAGMA temp_store` keeps them
/// in memory).
long long davgate_sqlite_statement_journal_files(void);

#endif
