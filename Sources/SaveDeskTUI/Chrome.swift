import SaveDeskViewModels
import TerminalKit

/// The parts around every screen: the header, the status bar, help, quit confirmation, and the
/// message for a terminal that is too small.
@MainActor
enum Chrome {
    static func header(_ title: String, breadcrumbs: Int, in rect: Rect, theme: Theme, into buffer: inout Buffer) {
        let width = buffer.put(" SaveDesk ", x: rect.x, y: rect.y, style: theme[.accent])
        buffer.put("\u{203A} " + title, x: rect.x + width, y: rect.y, style: theme[.title], clip: rect)
    }

    static func statusBar(model: AppModel, working: Bool, tick: Int, in rect: Rect, theme: Theme, into frame: inout Frame) {
        let mode = model.isTestMode ? ("TEST", theme[.statusTest]) : ("LIVE", theme[.statusLive])
        let connection: String
        switch model.connection {
        case .connecting: connection = "connecting\u{2026}"
        case .connected: connection = "\u{25CF} connected"
        case .unreachable: connection = "\u{25CB} offline (r retry)"
        }
        var left: [(String, Style)] = [mode, (model.operatorName ?? "operator", theme[.statusBar]), (model.serverURL.absoluteString, theme[.statusBar]),
                                       (connection, theme[.statusBar])]
        switch model.live {
        case .off: break
        case .connecting: left.append(("live\u{2026}", theme[.statusBar]))
        case .live: left.append(("\u{21BB} live", theme[.statusBar]))
        case .reconnecting(let seconds): left.append(("live: again in \(seconds) s", theme[.statusBar]))
        case .unavailable: left.append(("live off (g refreshes)", theme[.statusBar]))
        }
        var right: [(String, Style)] = []
        if working { right.append((Spinner.text(tick), theme[.statusBar])) }
        if model.outboxWaiting > 0 { right.append(("\(model.outboxWaiting) waiting", theme[.statusBar])) }
        if model.outboxRejected > 0 { right.append(("\(model.outboxRejected) not delivered", theme[.statusBar])) }
        right.append(("? help", theme[.statusBar]))
        StatusBar(
            left: left,
            right: right, theme: theme
        ).render(in: rect, frame: &frame)
    }

    static func help(_ keys: [KeyHelp], shared: [KeyHelp], in rect: Rect, theme: Theme, into frame: inout Frame) {
        let all = keys + [KeyHelp("", "")] + shared
        let modal = Modal(title: "Keys", width: min(rect.width, 72), height: min(rect.height, all.count + 3), theme: theme)
        frame.render(modal, in: frame.area)
        let inside = modal.inner(frame.area)
        for (row, help) in all.prefix(inside.height - 1).enumerated() {
            frame.buffer.put(help.keys, x: inside.x + 1, y: inside.y + row, style: theme[.accent])
            frame.buffer.put(help.action, x: inside.x + 17, y: inside.y + row, style: theme[.text], clip: inside)
        }
        frame.buffer.put("any key closes", x: inside.x + 1, y: inside.maxY - 1, style: theme[.muted])
    }

    static func confirmQuit(theme: Theme, into frame: inout Frame) {
        let modal = Modal(title: "Quit?", width: 54, height: 7, theme: theme)
        frame.render(modal, in: frame.area)
        let inside = modal.inner(frame.area)
        frame.render(Paragraph("A flow is in progress. Quit anyway? It is recorded as dismissed, with the answers given so far.",
                               style: theme[.text]), in: inside.inset(dx: 1, dy: 0))
        frame.render(ButtonRow([("y Quit", "quit.yes"), ("n Stay", "quit.no")], focused: 1, theme: theme),
                     in: Rect(x: inside.x + 1, y: inside.maxY - 1, width: inside.width - 1, height: 1))
    }

    static func tooSmall(width: Int, height: Int, theme: Theme, into frame: inout Frame) {
        let lines = [
            "The window is too small.",
            "Enlarge the window to at least \(TUIApp.minimumSize.width)\u{00D7}\(TUIApp.minimumSize.height)",
            "(now \(width)\u{00D7}\(height)).",
            "q quits.",
        ]
        let top = max(0, (height - lines.count) / 2)
        for (index, line) in lines.enumerated() {
            let text = CharacterWidth.truncate(line, to: width)
            frame.buffer.put(text, x: max(0, (width - CharacterWidth.of(text)) / 2), y: top + index,
                             style: index == 0 ? theme[.danger] : theme[.text])
        }
    }
}
