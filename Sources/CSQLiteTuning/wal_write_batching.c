#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include "sqlite_tuning.h"

// A VFS over the default one that gathers a transaction's writes to the
// write-ahead log into one write: SQLite writes each log frame as two
// pwrite(2)s, a 24-byte header and the page, so a small PUT's commit of 14
// frames made 28 system calls (issue 14). Only the log is gathered; every
// other file, and every other call on the log, goes straight through.
//
// The gathered bytes reach the file before anyone can be told they are
// there:
// - after the page of a commit frame (a frame header whose "database size
//   after commit" field is not zero), inside that very write call, so a
//   failure fails the commit;
// - before SQLite publishes new frames to readers: it writes the shared
//   log index's header in two copies with a barrier between them
//   (walIndexWriteHdr), and the barrier of the log's database file (and
//   each of its shared-memory locks, as the writer's lock is let go)
//   writes out its log's gathered bytes first, whatever the frames were;
// - before any other call on the log (read, sync, truncate, size, lock,
//   file control, close), before a write that does not continue them, and
//   when they would pass the buffer's size.
// So a reader never sees a frame that is not in the file, and a sync
// covers every frame written before it.

// Under 128 KiB: the default VFS writes at most 128 KiB - 1 bytes a call
// (its page writes never need more), and a larger one would come back short.
// A small PUT's commit, 14 frames of a 4 KiB page, is 58 KiB.
#define DAVGATE_WAL_BUFFER (120 << 10)
#define DAVGATE_WAL_FRAME_HEADER 24
#define DAVGATE_WAL_HEADER 32

typedef struct BatchedFile BatchedFile;
struct BatchedFile {
    sqlite3_file base;
    sqlite3_file *real;
    // The main database file's: its log's, while that is open.
    BatchedFile *log;
    // The log's: the database file it belongs to.
    BatchedFile *database;
    int isLog;
    unsigned char *gathered;
    int gatheredBytes;
    sqlite3_int64 gatheredAt;
    int commitPageNext;
    // The log's writes asked for, and those made (`davgate_sqlite_log_writes`).
    long long writesAsked;
    long long writesMade;
};

// Statement journals that went to a file, process-wide
// (`davgate_sqlite_statement_journal_files`).
static long long statementJournalFiles;

static sqlite3_vfs batchedVFS;
static sqlite3_vfs *realVFS;
static sqlite3_io_methods batchedMethods;

static int flushGathered(BatchedFile *file) {
    if (file->gatheredBytes == 0) return SQLITE_OK;
    int bytes = file->gatheredBytes;
    file->gatheredBytes = 0;
    file->writesMade++;
    return file->real->pMethods->xWrite(file->real, file->gathered, bytes, file->gatheredAt);
}

static int batchedClose(sqlite3_file *f) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    if (file->isLog && file->database) file->database->log = NULL;
    if (file->log) file->log->database = NULL;
    free(file->gathered);
    file->gathered = NULL;
    int closed = file->real->pMethods->xClose(file->real);
    return rc != SQLITE_OK ? rc : closed;
}

static int batchedRead(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    if (rc != SQLITE_OK) return rc;
    return file->real->pMethods->xRead(file->real, buffer, amount, offset);
}

static int batchedWrite(sqlite3_file *f, const void *bytes, int amount, sqlite3_int64 offset) {
    BatchedFile *file = (BatchedFile *)f;
    if (!file->isLog) return file->real->pMethods->xWrite(file->real, bytes, amount, offset);
    file->writesAsked++;
    int rc;
    if (file->gatheredBytes > 0 && (offset != file->gatheredAt + file->gatheredBytes
                                    || file->gatheredBytes + amount > DAVGATE_WAL_BUFFER)) {
        if ((rc = flushGathered(file)) != SQLITE_OK) return rc;
    }
    if (amount > DAVGATE_WAL_BUFFER || (!file->gathered && !(file->gathered = malloc(DAVGATE_WAL_BUFFER)))) {
        file->writesMade++;
        return file->real->pMethods->xWrite(file->real, bytes, amount, offset);
    }
    if (file->gatheredBytes == 0) file->gatheredAt = offset;
    memcpy(file->gathered + file->gatheredBytes, bytes, (size_t)amount);
    file->gatheredBytes += amount;
    if (file->commitPageNext && amount != DAVGATE_WAL_FRAME_HEADER) {
        file->commitPageNext = 0;
        return flushGathered(file);
    }
    if (amount == DAVGATE_WAL_FRAME_HEADER && offset >= DAVGATE_WAL_HEADER) {
        const unsigned char *header = bytes;
        file->commitPageNext = (header[4] | header[5] | header[6] | header[7]) != 0;
    }
    return SQLITE_OK;
}

static int batchedTruncate(sqlite3_file *f, sqlite3_int64 size) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xTruncate(file->real, size);
}

static int batchedSync(sqlite3_file *f, int flags) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xSync(file->real, flags);
}

static int batchedFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xFileSize(file->real, size);
}

static int batchedLock(sqlite3_file *f, int level) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xLock(file->real, level);
}

static int batchedUnlock(sqlite3_file *f, int level) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xUnlock(file->real, level);
}

static int batchedCheckReservedLock(sqlite3_file *f, int *out) {
    BatchedFile *file = (BatchedFile *)f;
    return file->real->pMethods->xCheckReservedLock(file->real, out);
}

static int batchedFileControl(sqlite3_file *f, int op, void *argument) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xFileControl(file->real, op, argument);
}

static int batchedSectorSize(sqlite3_file *f) {
    BatchedFile *file = (BatchedFile *)f;
    return file->real->pMethods->xSectorSize(file->real);
}

static int batchedDeviceCharacteristics(sqlite3_file *f) {
    BatchedFile *file = (BatchedFile *)f;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int batchedShmMap(sqlite3_file *f, int region, int size, int extend, void volatile **mapped) {
    BatchedFile *file = (BatchedFile *)f;
    return file->real->pMethods->xShmMap(file->real, region, size, extend, mapped);
}

static int batchedShmLock(sqlite3_file *f, int offset, int count, int flags) {
    BatchedFile *file = (BatchedFile *)f;
    if (file->log) flushGathered(file->log);
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

// Between the two copies of the log index's header: the frames it is about
// to publish go to the file first. A commit's frames are written already,
// by the write of its commit frame's page, which reports a failure; this
// is the guard for any other way of writing frames, and has no way to
// report one.
static void batchedShmBarrier(sqlite3_file *f) {
    BatchedFile *file = (BatchedFile *)f;
    if (file->log) flushGathered(file->log);
    file->real->pMethods->xShmBarrier(file->real);
}

static int batchedShmUnmap(sqlite3_file *f, int delete) {
    BatchedFile *file = (BatchedFile *)f;
    return file->real->pMethods->xShmUnmap(file->real, delete);
}

static int batchedFetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **pointer) {
    BatchedFile *file = (BatchedFile *)f;
    int rc = flushGathered(file);
    return rc != SQLITE_OK ? rc : file->real->pMethods->xFetch(file->real, offset, amount, pointer);
}

static int batchedUnfetch(sqlite3_file *f, sqlite3_int64 offset, void *pointer) {
    BatchedFile *file = (BatchedFile *)f;
    return file->real->pMethods->xUnfetch(file->real, offset, pointer);
}

static int batchedOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
    (void)vfs;
    BatchedFile *file = (BatchedFile *)f;
    memset(file, 0, sizeof(BatchedFile));
    file->real = (sqlite3_file *)&file[1];
    int rc = realVFS->xOpen(realVFS, name, file->real, flags, outFlags);
    if (rc != SQLITE_OK) {
        // A failed open that set its methods is closed all the same
        // (sqlite3_io_methods); SQLite will not call this one's xClose.
        if (file->real->pMethods) file->real->pMethods->xClose(file->real);
        file->base.pMethods = NULL;
        return rc;
    }
    if (!file->real->pMethods) {
        file->base.pMethods = NULL;
        return SQLITE_OK;
    }
    file->base.pMethods = &batchedMethods;
    if (flags & SQLITE_OPEN_SUBJOURNAL) __atomic_fetch_add(&statementJournalFiles, 1, __ATOMIC_RELAXED);
    if ((flags & SQLITE_OPEN_WAL) && name) {
        BatchedFile *database = (BatchedFile *)sqlite3_database_file_object(name);
        if (database && database->base.pMethods == &batchedMethods) {
            file->isLog = 1;
            file->database = database;
            database->log = file;
        }
    }
    return SQLITE_OK;
}

// The rest of the VFS is the default one's.
static int batchedDelete(sqlite3_vfs *v, const char *name, int syncDir) { (void)v; return realVFS->xDelete(realVFS, name, syncDir); }
static int batchedAccess(sqlite3_vfs *v, const char *name, int flags, int *out) { (void)v; return realVFS->xAccess(realVFS, name, flags, out); }
static int batchedFullPathname(sqlite3_vfs *v, const char *name, int size, char *out) {
    (void)v;
    return realVFS->xFullPathname(realVFS, name, size, out);
}
static void *batchedDlOpen(sqlite3_vfs *v, const char *name) { (void)v; return realVFS->xDlOpen(realVFS, name); }
static void batchedDlError(sqlite3_vfs *v, int size, char *out) { (void)v; realVFS->xDlError(realVFS, size, out); }
static void (*batchedDlSym(sqlite3_vfs *v, void *handle, const char *symbol))(void) {
    (void)v;
    return realVFS->xDlSym(realVFS, handle, symbol);
}
static void batchedDlClose(sqlite3_vfs *v, void *handle) { (void)v; realVFS->xDlClose(realVFS, handle); }
static int batchedRandomness(sqlite3_vfs *v, int size, char *out) { (void)v; return realVFS->xRandomness(realVFS, size, out); }
static int batchedSleep(sqlite3_vfs *v, int microseconds) { (void)v; return realVFS->xSleep(realVFS, microseconds); }
static int batchedCurrentTime(sqlite3_vfs *v, double *out) { (void)v; return realVFS->xCurrentTime(realVFS, out); }
static int batchedGetLastError(sqlite3_vfs *v, int size, char *out) { (void)v; return realVFS->xGetLastError(realVFS, size, out); }
static int batchedCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *out) {
    (void)v;
    return realVFS->xCurrentTimeInt64(realVFS, out);
}

int davgate_sqlite_batch_log_writes(void) {
    if (realVFS) return SQLITE_OK;
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real || real->iVersion < 2) return SQLITE_ERROR;
    batchedMethods = (sqlite3_io_methods){
        .iVersion = 3,
        .xClose = batchedClose, .xRead = batchedRead, .xWrite = batchedWrite, .xTruncate = batchedTruncate,
        .xSync = batchedSync, .xFileSize = batchedFileSize, .xLock = batchedLock, .xUnlock = batchedUnlock,
        .xCheckReservedLock = batchedCheckReservedLock, .xFileControl = batchedFileControl,
        .xSectorSize = batchedSectorSize, .xDeviceCharacteristics = batchedDeviceCharacteristics,
        .xShmMap = batchedShmMap, .xShmLock = batchedShmLock, .xShmBarrier = batchedShmBarrier,
        .xShmUnmap = batchedShmUnmap, .xFetch = batchedFetch, .xUnfetch = batchedUnfetch,
    };
    batchedVFS = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(BatchedFile) + real->szOsFile,
        .mxPathname = real->mxPathname,
        .zName = "davgate-batched-log",
        .xOpen = batchedOpen, .xDelete = batchedDelete, .xAccess = batchedAccess,
        .xFullPathname = batchedFullPathname, .xDlOpen = batchedDlOpen, .xDlError = batchedDlError,
        .xDlSym = batchedDlSym, .xDlClose = batchedDlClose, .xRandomness = batchedRandomness,
        .xSleep = batchedSleep, .xCurrentTime = batchedCurrentTime, .xGetLastError = batchedGetLastError,
        .xCurrentTimeInt64 = batchedCurrentTimeInt64,
    };
    realVFS = real;
    return sqlite3_vfs_register(&batchedVFS, 1);
}

int davgate_sqlite_log_writes(sqlite3 *db, long long *asked, long long *made) {
    sqlite3_file *f = NULL;
    int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f);
    if (rc != SQLITE_OK || !f || f->pMethods != &batchedMethods) return SQLITE_NOTFOUND;
    BatchedFile *log = ((BatchedFile *)f)->log;
    if (!log) return SQLITE_NOTFOUND;
    *asked = log->writesAsked;
    *made = log->writesMade;
    return SQLITE_OK;
}

long long davgate_sqlite_statement_journal_files(void) {
    return __atomic_load_n(&statementJournalFiles, __ATOMIC_RELAXED);
}
