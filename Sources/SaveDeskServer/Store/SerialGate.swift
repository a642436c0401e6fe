/// A first-come, first-served async lock: one holder at a time, waiters resumed in order.
/// The store uses it so each transaction runs alone on its connection (an actor alone would
/// let transactions interleave at every `await`).
actor SerialGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Whether anyone is waiting for the gate.
    var hasWaiters: Bool { !waiters.isEmpty }

    func release() {
        if waiters.isEmpty {
            busy = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
