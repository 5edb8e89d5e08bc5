#include "global_executor_hook.h"

#include <stdatomic.h>
#include <stddef.h>

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
