#ifndef DAVGATE_SQLITE_TUNING_H
#define DAVGATE_SQLITE_TUNING_H

/// Turns off SQLite's memory statistics, which put one process-wide mutex
/// around every allocation SQLite makes: with the event loops reading the
/// index while the writer commits, that mutex was the most contended lock
/// of a small-PUT load (issue 14). Must run before SQLite is initialised;
/// returns SQLite's result code (SQLITE_MISUSE when it was too late).
int davgate_sqlite_disable_memory_statistics(void);

#endif
