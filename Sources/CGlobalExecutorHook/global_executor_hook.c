#include "global_executor_hook.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

// The runtime's hook (swift/Runtime/Concurrency.h): called with the job and
// the runtime's own enqueue, in Swift's calling convention. Declared here as
// a plain pointer, and read and written atomically as SwiftNIO does, since
// the runtime loads it on every global enqueue from any thread.
extern void *swift_task_enqueueGlobal_hook;

static _Atomic(davgate_enqueue_job) target;

typedef __attribute__((swiftcall)) void (*original_enqueue)(void *job);

__attribute__((swiftcall))
static void enqueue_hook(void *job, original_enqueue original) {
    if (!atomic_load_explicit(&target, memory_order_acquire)(job)) original(job);
}

bool davgate_install_global_enqueue(davgate_enqueue_job enqueue) {
    // The target is set before the hook, which may run at once; a hook set
    // already (by us or anyone) leaves both as they are. Meant to be called
    // once, from main, before other threads install anything.
    if (atomic_load((_Atomic(void *) *)&swift_task_enqueueGlobal_hook) != NULL) return false;
    atomic_store_explicit(&target, enqueue, memory_order_release);
    void *expected = NULL;
    return atomic_compare_exchange_strong((_Atomic(void *) *)&swift_task_enqueueGlobal_hook, &expected, (void *)enqueue_hook);
}

bool davgate_remove_global_enqueue(void) {
    // The target stays: a job that loaded the hook just before may still
    // call through it.
    void *expected = (void *)enqueue_hook;
    return atomic_compare_exchange_strong((_Atomic(void *) *)&swift_task_enqueueGlobal_hook, &expected, NULL);
}

bool davgate_global_enqueue_installed(void) {
    return atomic_load((_Atomic(void *) *)&swift_task_enqueueGlobal_hook) == (void *)enqueue_hook;
}

// The runtime's `SerialExecutorRef` (swift/ABI/Executor.h): an identity and
// an implementation word; both zero is the generic executor, what the
// runtime's own global executor runs its jobs on.
typedef struct {
    void *identity;
    uintptr_t implementation;
} davgate_serial_executor_ref;

extern __attribute__((swiftcall)) void swift_job_run(void *job, davgate_serial_executor_ref executor);

// Why not `UnownedJob.runSynchronously(on:)` with the loop's executor, as
// SwiftNIO's `EventLoop.enqueue(_:)` does: a job run there is isolated to
// the loop's serial executor, and every call the task then makes into
// nonisolated async code (most of it: the body stream's `next()`, every
// `withTaskCancellationHandler`, the response writer) is a switch away from
// that executor, which a custom executor cannot hand over in place: the
// runtime enqueued the job on the global executor again, this hook put it
// back on the loop, and it ran again: 25 job runs a small PUT, 2 since
// (issue 14). Run as the generic executor, those switches are no-ops.
// The closure `loop.execute` takes costs an allocation a job that NIO's
// own `enqueue(_:)` does not make; measured, the whole is a gain.
void davgate_run_job_as_global(void *job) {
    swift_job_run(job, (davgate_serial_executor_ref){NULL, 0});
}
