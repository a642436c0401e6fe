import SaveDeskViewModels
import TerminalKit

/// The cancel-flow screen's own state for one page of the flow (focus, typing), kept with the
/// page it belongs to.
struct CancelFlowPageUI {
    var page: CancelFlowPage?
    /// The highlighted option of a choice page.
    var highlighted = 0
    /// Focus on the buttons row (nil: on the options or the text field).
    var focusedButton: Int?
    var field = TextFieldState()
    /// Cancel now rather than at period end (kept across pages).
    var cancelNow = false
}
