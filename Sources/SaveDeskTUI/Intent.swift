import Foundation
import SaveDeskViewModels

/// What a screen asks of the app after a key, a click or being shown. Screens never call the
/// app: they change their own UI state and return one of these; `TUIApp` acts on it.
enum Intent {
    /// Nothing more to do.
    case none
    /// View-model work, run without blocking input (counted for spinners and `settle()`); what it
    /// returns is acted on when it ends (a toast with the result, say).
    case perform(@MainActor () async -> Intent)
    case open(AppModel.Route)
    /// Back one screen (the screen left is closed).
    case back
    /// A message for the agent.
    case show(String, isError: Bool)
    /// Ask the server again who we are and what time it is (after moving its clock).
    case checkConnection
    /// Several, in order.
    indirect case all([Intent])

    /// Work whose end needs nothing more.
    static func run(_ work: @escaping @MainActor () async -> Void) -> Intent {
        .perform {
            await work()
            return .none
        }
    }
}

/// What a screen may read of the app when it acts: the server's clock and who is signed in.
@MainActor
struct ScreenContext {
    var serverNow: Date
    var operatorName: String?
}
