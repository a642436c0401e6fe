/// Loads again for changes that arrive while a load runs: one more load for all of them, not one
/// each (the event stream can report a burst).
@MainActor
final class Reloader {
    private var loading = false
    private var again = false

    func run(_ load: () async -> Void) async {
        if loading {
            again = true
            return
        }
        loading = true
        defer { loading = false }
        repeat {
            again = false
            await load()
        } while again
    }
}
