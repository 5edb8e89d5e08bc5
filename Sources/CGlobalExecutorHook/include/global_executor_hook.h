#ifndef DAVGATE_GLOBAL_EXECUTOR_HOOK_H
#define DAVGATE_GLOBAL_EXECUTOR_HOOK_H

#include <stdbool.h>

/// Where Swift concurrency's global executor hands a job: `job` is the
/// runtime's `Job *`, the bits of an `UnownedJob`. Returns false to leave
/// the job to the runtime's own global executor.
typedef bool (*davgate_enqueue_job)(void *job);

/// Hands every job the runtime would give its global executor (Dispatch's
/// pool on Linux) to `enqueue` first, and to the runtime's own executor
/// when `enqueue` returns false, by setting the runtime's
/// `swift_task_enqueueGlobal_hook`. Referenced at link time, so it works in
/// a binary linked with the static standard library too, whose link
/// arguments (`--exclude-libs ALL`) keep that variable out of the dynamic
/// symbol table where SwiftNIO's own take-over looks for it with `dlsym`.
/// Returns false when a hook is set already (nothing is changed then).
bool davgate_install_global_enqueue(davgate_enqueue_job enqueue);

/// Puts back the runtime's own global executor if davgate's hook is the
/// one set; returns whether it was.
bool davgate_remove_global_enqueue(void);

/// Whether davgate's hook is the one the runtime calls.
bool davgate_global_enqueue_installed(void);

/// Runs `job` (the bits of an `UnownedJob`) now, on the calling thread, as
/// the runtime's global executor runs its jobs: isolated to nothing (the
/// generic executor), under the task's own task executor preference (none
/// for the jobs the hook gets: a task that has one goes to that executor,
/// never to the global one). See global_executor_hook.c.
void davgate_run_job_as_global(void *job);

#endif
