import Foundation

/// The parts of Stripe's objects SaveDesk reads, decoded leniently (Stripe adds fields; the
/// shapes follow Stripe's published fixtures for the pinned API version). Nothing about a card
/// is read or kept.
struct StripeSubscription: Decodable, Sendable, Equatable {
    struct Item: Decodable, Sendable, Equatable {
        struct Price: Decodable, Sendable, Equatable {
            var id: String
            var currency: String?
            var unit_amount: Int64?
        }
        var id: String
        /// The price (an older API shape, as localstripe speaks it, names it `plan`).
        var price: Price?
        var plan: Price?
        var current_period_start: Int64?
        var current_period_end: Int64?
    }
    struct Items: Decodable, Sendable, Equatable { var data: [Item] }
    struct PauseCollection: Decodable, Sendable, Equatable {
        var behavior: String
        var resumes_at: Int64?
    }
    struct CancellationDetails: Decodable, Sendable, Equatable {
        var comment: String?
        var feedback: String?
        var reason: String?
    }

    var id: String
    var customer: String
    var status: String
    var livemode: Bool
    var created: Int64
    var cancel_at_period_end: Bool
    var cancel_at: Int64?
    var canceled_at: Int64?
    var ended_at: Int64?
    var trial_end: Int64?
    var pause_collection: PauseCollection?
    var cancellation_details: CancellationDetails?
    var items: Items
    var metadata: [String: String]
    /// Discount ids (or objects when expanded: then only their ids are read).
    var discounts: [StripeReference]?
    /// Where the period ends in API versions before 2025-03-31 (on the items since).
    var current_period_end: Int64?
    var latest_invoice: StripeReference?
    /// Set once the customer's card is saved (a trialing checkout is paid for when it is).
    var default_payment_method: StripeReference?

    var periodEnd: Int64? { items.data.compactMap(\.current_period_end).max() ?? current_period_end }
    var priceId: String? { items.data.first.flatMap { $0.price?.id ?? $0.plan?.id } }
}

/// An expandable field: an id, or the object it names (of which only the id is read).
struct StripeReference: Decodable, Sendable, Equatable {
    var id: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let id = try? container.decode(String.self) {
            self.id = id
        } else {
            struct Object: Decodable { var id: String }
            id = try container.decode(Object.self).id
        }
    }
}

struct StripeCustomer: Decodable, Sendable, Equatable {
    var id: String
    var livemode: Bool
    var email: String?
    var metadata: [String: String]
}

struct StripeCoupon: Decodable, Sendable, Equatable {
    var id: String
    var percent_off: Double?
    var duration: String
    var duration_in_months: Int?
    var valid: Bool
}

struct StripePortalSession: Decodable, Sendable, Equatable {
    var id: String
    var url: String
    var customer: String
    var return_url: String?
}

/// A webhook's event. Its `data.object` is kept as raw JSON and decoded by the type it is.
struct StripeEvent: Decodable, Sendable {
    struct Payload: Decodable, Sendable {
        var object: RawObject
    }
    /// The object, with its `object` name read first.
    struct RawObject: Decodable, Sendable {
        var kind: String
        var json: Data

        init(from decoder: any Decoder) throws {
            struct Head: Decodable { var object: String }
            let container = try decoder.singleValueContainer()
            kind = try container.decode(Head.self).object
            json = try JSONEncoder().encode(try container.decode(JSONValue.self))
        }
    }

    var id: String
    var type: String
    var created: Int64
    var livemode: Bool
    var data: Payload
}

/// Any JSON value, to re-encode a part of a document as it was.
enum JSONValue: Codable, Sendable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 9e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
