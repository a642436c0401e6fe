import Foundation
import RetentionDomain
import SaveDeskClient

/// The event stream's state, for the status bar.
public enum LiveState: Hashable, Sendable {
    /// Not followed (headless commands, or not started).
    case off
    case connecting
    case live
    /// Lost; the next attempt in `seconds`.
    case reconnecting(seconds: Int)
    /// Not available here (refused, or an https server); the refresh keys still work.
    case unavailable(String)
}

/// What an agent is doing on a customer.
public typealias LiveActivity = DeskEvents.Activity

/// A recorded change, as the screens need it.
public struct LiveChange: Hashable, Sendable {
    public var id: Int64
    public var customerId: String
    /// The audit action: `checkout.paid`, `app_store.did_change_renewal_status`…
    public var type: String
    public var actor: String

    public init(id: Int64, customerId: String, type: String, actor: String) {
        self.id = id
        self.customerId = customerId
        self.type = type
        self.actor = actor
    }

    /// Events were missed (purged before the console resumed): what is on screen may be old.
    public static func resync(customerId: String) -> LiveChange { LiveChange(id: 0, customerId: customerId, type: "resync", actor: "") }
    public var isResync: Bool { type == "resync" }

    /// A checkout was paid or failed (a waiting switch can be confirmed).
    public var settlesCheckout: Bool { ["checkout.paid", "checkout.failed", "checkout.finalized"].contains(type) }
    /// The App Store reported something (Apple's side of a flow can be checked again).
    public var isFromAppStore: Bool { type.hasPrefix("app_store.") || isResync }
    /// What the cancel-flow analytics count.
    public var movesAnalytics: Bool {
        type.hasPrefix("cancel_flow.") || type.hasPrefix("checkout.") || type.hasPrefix("switch_and_save.") || isResync
    }
}

/// Another agent on a customer.
public struct LivePresence: Hashable, Sendable {
    public var operatorName: String
    public var session: String
    public var activity: LiveActivity
    public var expiresAt: Date

    /// "Priya (support lead) is also on this customer (in a cancel flow)".
    public var sentence: String { DeskEvents.presence(operatorName: operatorName, activity: activity) }
}

extension AppModel {
    /// Follows the server's event stream: screens move when what they show changes, and other
    /// agents on a customer are shown. Reconnects by itself; the status bar says how it stands.
    public func startLive() {
        guard feed == nil else { return }
        let feed = DeskEventFeed(serverURL: client.serverURL, key: key)
        self.feed = feed
        live = .connecting
        feed.start { [weak self] state in
            Task { @MainActor in self?.note(state) }
        } message: { [weak self] message in
            Task { @MainActor in self?.receive(message) }
        }
    }

    /// Stops following, and says this console left the customer it was on.
    public func stopLive() {
        feed?.stop()
        feed = nil
        live = .off
        announce(customerId: nil, activity: .viewing)
    }

    func note(_ state: DeskEventFeed.State) {
        switch state {
        case .connecting: if live != .live { live = .connecting }
        case .live:
            live = .live
            // A new subscription starts with who is on which customer now.
            presence = [:]
            // Presence is in memory on the server: say again where this console is.
            if let announced { send(customerId: announced.customerId, activity: announced.activity) }
        case .reconnecting(let seconds, _): live = .reconnecting(seconds: seconds)
        case .stopped(let reason): live = .unavailable(reason)
        case .refused(let error): live = .unavailable(error.message)
        }
    }

    /// Hands a message of the stream to where it belongs.
    public func receive(_ message: DeskStreamMessage) {
        switch message {
        case .event(let event):
            onChange?(LiveChange(id: event.id, customerId: event.customerId, type: event._type, actor: event.actor))
        case .presence(let wire):
            guard wire.session != session else { return }
            var others = (presence[wire.customerId] ?? []).filter { $0.session != wire.session || $0.operatorName != wire._operator }
            let activity = LiveActivity(rawValue: wire.activity.rawValue) ?? .viewing
            // The server says when a presence lapses (as `left`); the console keeps no clock of its own for it.
            if activity != .left {
                others.append(LivePresence(operatorName: wire._operator, session: wire.session, activity: activity, expiresAt: wire.expiresAt))
            }
            presence[wire.customerId] = others.isEmpty ? nil : others.sorted { $0.operatorName < $1.operatorName }
        case .gap:
            // Some events were purged while away: every screen reads again what it shows.
            onResync?()
        }
    }

    /// The other agents on `customerId` now.
    public func others(on customerId: String) -> [LivePresence] { presence[customerId] ?? [] }

    /// Where this console is: a customer and what the agent does there (nil: no customer). Told to
    /// the server at once when it changes, then as a heartbeat while it stays.
    public func announce(customerId: String?, activity: LiveActivity) {
        if let announced, announced.customerId == customerId, announced.activity == activity { return }
        if let announced, announced.customerId != customerId { send(customerId: announced.customerId, activity: .left) }
        announced = customerId.map { (customerId: $0, activity: activity) }
        presenceBeat?.cancel()
        guard let now = announced, feed != nil else { return }
        send(customerId: now.customerId, activity: now.activity)
        presenceBeat = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(DeskEvents.presenceHeartbeatSeconds))
                guard !Task.isCancelled, let self, let now = self.announced else { return }
                self.send(customerId: now.customerId, activity: now.activity)
            }
        }
    }

    private func send(customerId: String, activity: LiveActivity) {
        guard feed != nil || activity == .left, let wire = Wire.DeskActivity(rawValue: activity.rawValue) else { return }
        let client = client, session = session
        Task { try? await client.announcePresence(customerId: customerId, session: session, activity: wire) }
    }
}
