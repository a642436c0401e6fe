import Foundation

extension CancelFlow {
    /// The kind of save offer.
    public enum OfferType: WireEnum {
        case discount, freeTrial, freeExtension
        case unknown(String)

        public static let knownCases: [OfferType] = [.discount, .freeTrial, .freeExtension]
        public var wireValue: String {
            switch self {
            case .discount: "discount"
            case .freeTrial: "free_trial"
            case .freeExtension: "free_extension"
            case .unknown(let raw): raw
            }
        }
        public init(unknown wireValue: String) { self = .unknown(wireValue) }
    }

    /// The save offer shown on the retention page. `value` is a string on the wire ("40" = 40 % off).
    public struct Offer: Codable, Hashable, Sendable {
        public var enabled: Bool
        public var title: String
        public var body: String
        public var ctaText: String
        public var type: OfferType
        public var value: String

        public init(enabled: Bool, title: String, body: String, ctaText: String, type: OfferType, value: String) {
            self.enabled = enabled
            self.title = title
            self.body = body
            self.ctaText = ctaText
            self.type = type
            self.value = value
        }

        enum CodingKeys: String, CodingKey {
            case enabled, title, body
            case ctaText = "cta_text"
            case type, value
        }
    }

    /// The pause section of the retention page.
    public struct PauseConfig: Codable, Hashable, Sendable {
        public var enabled: Bool
        public var title: String
        public var body: String
        public var ctaText: String
        public var options: [PauseOption]

        public init(enabled: Bool, title: String, body: String, ctaText: String, options: [PauseOption]) {
            self.enabled = enabled
            self.title = title
            self.body = body
            self.ctaText = ctaText
            self.options = options
        }

        /// Options in display order.
        public var orderedOptions: [PauseOption] {
            options.enumerated()
                .sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }
                .map(\.element)
        }

        enum CodingKeys: String, CodingKey {
            case enabled, title, body
            case ctaText = "cta_text"
            case options
        }
    }

    /// How a pause option's length is given.
    public enum PauseDurationType: WireEnum {
        case days, fixedDate
        case unknown(String)

        public static let knownCases: [PauseDurationType] = [.days, .fixedDate]
        public var wireValue: String {
            switch self {
            case .days: "days"
            case .fixedDate: "fixed_date"
            case .unknown(let raw): raw
            }
        }
        public init(unknown wireValue: String) { self = .unknown(wireValue) }
    }

    /// One choice of the pause picker: a number of days, or a fixed resume date.
    public struct PauseOption: Codable, Hashable, Sendable, Identifiable {
        public var id: Int
        public var order: Int
        public var label: String
        public var durationType: PauseDurationType
        public var durationDays: Int?
        public var resumeDate: Date?

        public init(
            id: Int, order: Int, label: String, durationType: PauseDurationType, durationDays: Int? = nil,
            resumeDate: Date? = nil
        ) {
            self.id = id
            self.order = order
            self.label = label
            self.durationType = durationType
            self.durationDays = durationDays
            self.resumeDate = resumeDate
        }

        /// When a pause chosen `now` would end, or nil when the option has no usable length.
        public func resumesAt(from now: Date) -> Date? {
            switch durationType {
            case .days:
                guard let days = durationDays, days > 0 else { return nil }
                return now.addingTimeInterval(TimeInterval(days) * Seconds.day)
            case .fixedDate:
                guard let resumeDate, resumeDate > now else { return nil }
                return resumeDate
            case .unknown:
                return nil
            }
        }

        /// The pause length in whole days (a fixed date counts the days up to it, rounded up).
        public func durationDays(from now: Date) -> Int? {
            switch durationType {
            case .days:
                guard let days = durationDays, days > 0 else { return nil }
                return days
            case .fixedDate:
                guard let resumesAt = resumesAt(from: now) else { return nil }
                return Int((resumesAt.timeIntervalSince(now) / Seconds.day).rounded(.up))
            case .unknown:
                return nil
            }
        }

        enum CodingKeys: String, CodingKey {
            case id, order, label
            case durationType = "duration_type"
            case durationDays = "duration_days"
            case resumeDate = "resume_date"
        }
    }
}
