import Synchronization

/// A first-come, first-served async lock: one holder at a time, waiters resumed in order.
/// The store uses it so each transaction runs alone on its connection (an actor alone would
/// let transactions interleave at every `await`). A lock, not an actor: the gate is asked for
/// on the writer's thread, and an actor's every call would be a hop to another thread and back.
final class SerialGate: Sendable {
    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func acquire() async {
        let free = state.withLock { state -> Bool in
            guard !state.busy else { return false }
            state.busy = true
            return true
        }
        if free { return }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Whether anyone is waiting for the gate.
    var hasWaiters: Bool { state.withLock { !$0.waiters.isEmpty } }

    /// Hands the gate to the first waiter, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
