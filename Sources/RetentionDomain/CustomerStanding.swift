import Foundation

/// The customer's overall state in one line, for the banner at the top of the customer screen:
/// which subscription counts (the web one when there are both, as cancel and pause act on it),
/// how it stands, and what remains on Apple's side. After a switch the customer is "Active on
/// the web", and the App Store subscription winding down is not reported as a cancellation.
public enum CustomerStanding {
    /// One entitlement with the lifecycle line the server resolved for it.
    public struct Item: Hashable, Sendable {
        public var entitlement: Entitlement
        public var productName: String
        /// "Active · renews Dec 2, 2026", "Migration trial · ends Dec 2, 2026"…
        public var summary: String
        public var warning: Lifecycle.WarningLevel

        public init(entitlement: Entitlement, productName: String, summary: String, warning: Lifecycle.WarningLevel) {
            self.entitlement = entitlement
            self.productName = productName
            self.summary = summary
            self.warning = warning
        }
    }

    public struct Standing: Hashable, Sendable {
        /// "Active on the web · Premium Monthly · Migration trial · ends Dec 2, 2026".
        public var headline: String
        public var level: Lifecycle.WarningLevel
        /// What remains on Apple's side when the customer is billed on the web too.
        public var detail: String?
        /// The entitlement the headline is about.
        public var mainId: String?
        /// Entitlements the headline covers: their own banners would only repeat or contradict it.
        public var covered: Set<String>
    }

    public static func resolve(_ items: [Item], timeZone: TimeZone = .gmt) -> Standing {
        let live = items.filter { $0.entitlement.status.isLive }
        let web = live.first { $0.entitlement.source == .webCheckout }
        let store = live.first { $0.entitlement.source.isStore }
        guard let main = web ?? store else {
            let lapsed = items.last
            return Standing(
                headline: "No live subscription" + (lapsed.map { " \u{00B7} \($0.productName) \u{00B7} \($0.summary)" } ?? ""),
                level: lapsed == nil ? .none : .notice, detail: nil, mainId: lapsed?.entitlement.id,
                covered: Set(lapsed.map { [$0.entitlement.id] } ?? [])
            )
        }
        let place = main.entitlement.source == .webCheckout ? "on the web" : "on the App Store"
        var headline: String
        switch main.entitlement.status {
        case .paused: headline = "Paused \(place) \u{00B7} \(main.productName) \u{00B7} " + drop("Paused", from: main.summary)
        case .gracePeriod, .pastDue: headline = "Payment failing \(place) \u{00B7} \(main.productName) \u{00B7} \(main.summary)"
        case _ where !main.entitlement.willRenew: headline = "Cancelling \(place) \u{00B7} \(main.productName) \u{00B7} \(main.summary)"
        default: headline = "Active \(place) \u{00B7} \(main.productName) \u{00B7} " + drop("Active", from: main.summary)
        }
        var covered: Set<String> = [main.entitlement.id]
        var detail: String?
        var level = main.warning
        if let web, let store, web != store {
            covered.insert(store.entitlement.id)
            if store.entitlement.willRenew {
                detail = "The App Store still renews \(store.productName): the customer turns it off in Settings."
                level = max(level, .warning)
            } else {
                let end = store.entitlement.expiresAt.map { " on " + CalendarDays.display($0, in: timeZone) } ?? ""
                detail = "App Store billing for \(store.productName) ends\(end): no double charge."
            }
        }
        headline = headline.hasSuffix(" \u{00B7} ") ? String(headline.dropLast(3)) : headline
        return Standing(headline: headline, level: level, detail: detail, mainId: main.entitlement.id, covered: covered)
    }

    /// "Active · renews Dec 2" → "renews Dec 2"; anything else unchanged.
    private static func drop(_ word: String, from summary: String) -> String {
        if summary == word { return "" }
        let prefix = word + " \u{00B7} "
        return summary.hasPrefix(prefix) ? String(summary.dropFirst(prefix.count)) : summary
    }
}
