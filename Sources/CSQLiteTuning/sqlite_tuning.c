#include <sqlite3.h>
#include "sqlite_tuning.h"

// sqlite3_config is variadic, which Swift cannot call: hence this file.
int davgate_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int davgate_sqlite_statement_journal_spill(int bytes) {
    return sqlite3_config(SQLITE_CONFIG_STMTJRNL_SPILL, bytes);
}
