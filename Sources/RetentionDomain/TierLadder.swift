import Foundation

/// Tier access levels: each product maps to a level; an upgrade raises it.
public struct TierLadder: Hashable, Sendable {
    /// A change between two products.
    public enum Change: String, Hashable, Sendable, Codable {
        case upgrade, downgrade, crossgrade
    }

    /// Product id → access level (higher gives more).
    public var levels: [String: Int]

    public init(levels: [String: Int]) { self.levels = levels }

    /// The access level of a product; 0 for a product the ladder does not know.
    public func accessLevel(for productId: String) -> Int { levels[productId] ?? 0 }

    /// Whether moving from one product to another raises, lowers or keeps the level.
    public func change(from current: String, to target: String) -> Change {
        let from = accessLevel(for: current)
        let to = accessLevel(for: target)
        return to > from ? .upgrade : to < from ? .downgrade : .crossgrade
    }

    /// The highest level among entitlements that give access now.
    public func accessLevel(of entitlements: [Entitlement], now: Date, policy: Lifecycle.Policy = .init()) -> Int {
        entitlements
            .filter { Lifecycle.resolve($0, now: now, context: .init(policy: policy)).hasAccess }
            .map { accessLevel(for: $0.productId) }
            .max() ?? 0
    }
}
