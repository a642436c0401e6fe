import Foundation
import SQLKit

/// App Store offer codes from the config, each handed out at most once, kept in two pools: codes
/// for lapsed subscribers (`win_back`) and codes for subscribers who stay (`cancel_flow`).
enum OfferCodePool: String, Sendable {
    case winBack = "win_back"
    case cancelFlow = "cancel_flow"

    /// Adds the config's codes that the store does not have yet.
    func sync(_ store: Store, codes: [String]) async throws {
        guard !codes.isEmpty else { return }
        try await store.transaction(key: "offer-codes") { db in
            for code in codes {
                try await db.insert(into: "win_back_codes").columns("code", "pool").values(SQLBind(code), SQLBind(rawValue))
                    .ignoringConflicts(with: "code").run()
            }
        }
    }

    /// The code this customer already holds from this pool.
    func code(of customerId: String, _ db: any SQLDatabase) async throws -> String? {
        try await db.select().column("code").from("win_back_codes").where("pool", .equal, rawValue)
            .where("customer_id", .equal, customerId).first()?.decode(column: "code", as: String.self)
    }

    /// Whether a code can be handed to this customer: one they hold, or one still free.
    func hasCode(for customerId: String, _ db: any SQLDatabase) async throws -> Bool {
        if try await code(of: customerId, db) != nil { return true }
        return try await db.select().column("code").from("win_back_codes").where("pool", .equal, rawValue)
            .where("customer_id", .is, SQLLiteral.null).limit(1).first() != nil
    }

    /// The customer's code if they already have one, otherwise the next free code, now theirs.
    func issue(to customerId: String, by actor: String, _ db: any SQLDatabase, now: Int64, configKey: String) async throws -> (code: String, isNew: Bool) {
        if let mine = try await code(of: customerId, db) { return (mine, false) }
        guard let free = try await db.select().column("code").from("win_back_codes").where("pool", .equal, rawValue)
            .where("customer_id", .is, SQLLiteral.null).orderBy("code").limit(1).first()
        else {
            throw SaveDeskError.conflict("the pool of App Store offer codes is empty; add codes to \(configKey) in the config", code: "no_offer_codes")
        }
        let code = try free.decode(column: "code", as: String.self)
        try await db.update("win_back_codes").set("customer_id", to: customerId).set("issued_by", to: actor).set("issued_at", to: now)
            .where("code", .equal, code).where("customer_id", .is, SQLLiteral.null).run()
        return (code, true)
    }
}
