import Foundation

/// App Store offer codes from the config, each handed out at most once, kept in two pools: codes
/// for lapsed subscribers (`win_back`) and codes for subscribers who stay (`cancel_flow`).
enum OfferCodePool: String, Sendable {
    case winBack = "win_back"
    case cancelFlow = "cancel_flow"

    /// Adds the config's codes that the store does not have yet.
    func sync(_ store: Store, codes: [String]) async throws {
        guard !codes.isEmpty else { return }
        try await store.transaction(key: "offer-codes") { data in try await data.offerCodes.add(codes, pool: rawValue) }
    }

    /// Whether a code can be handed to this customer: one they hold, or one still free.
    func hasCode(for customerId: String, _ data: Repositories) async throws -> Bool {
        if try await data.offerCodes.code(of: customerId, pool: rawValue) != nil { return true }
        return try await data.offerCodes.firstFree(pool: rawValue) != nil
    }

    /// The customer's code if they already have one, otherwise the next free code, now theirs.
    func issue(to customerId: String, by actor: String, _ data: Repositories, now: Int64, configKey: String) async throws -> (code: String, isNew: Bool) {
        if let mine = try await data.offerCodes.code(of: customerId, pool: rawValue) { return (mine, false) }
        guard let free = try await data.offerCodes.firstFree(pool: rawValue) else {
            throw SaveDeskError.conflict("the pool of App Store offer codes is empty; add codes to \(configKey) in the config", code: "no_offer_codes")
        }
        try await data.offerCodes.assign(free, to: customerId, by: actor, at: now)
        return (free, true)
    }
}
