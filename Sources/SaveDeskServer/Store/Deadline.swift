import Synchronization

/// Waiting for a task no longer than a deadline, leaving it running past it (a write that is
/// slow still commits; the caller decides whether to cancel).
///
/// Not a task group: a group waits for every child before it returns, and awaiting a task's
/// value does not end when the waiter is cancelled, so a group racing a task against a timer
/// waits for the task however long it takes.
enum Deadline {
    /// The task's result if it ends within `limit`; nil if it does not.
    static func value<T: Sendable, Failure: Error>(of task: Task<T, Failure>, within limit: Duration) async -> Result<T, Failure>? {
        let first = First<Result<T, Failure>?>()
        return await withCheckedContinuation { continuation in
            first.set(continuation)
            let timer = Task {
                try? await Task.sleep(for: limit)
                first.resume(nil)
            }
            Task {
                let result = await task.result
                timer.cancel()
                first.resume(result)
            }
        }
    }

    /// Resumes a continuation once, with whichever value comes first.
    private final class First<Value: Sendable>: Sendable {
        private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)
        func set(_ waiting: CheckedContinuation<Value, Never>) { continuation.withLock { $0 = waiting } }
        func resume(_ value: Value) { continuation.withLock { $0.take() }?.resume(returning: value) }
    }
}
