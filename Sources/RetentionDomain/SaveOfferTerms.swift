import Foundation

/// How long a coupon applies (Stripe's `duration`).
public enum CouponDuration: Hashable, Sendable, Codable {
    case once
    case repeating(months: Int)
    case forever
}

/// A length of time given free.
public enum FreePeriod: Hashable, Sendable {
    case days(Int)
    case months(Int)
}

/// What accepting a save offer grants, and the message the seed shows ("40% off for 3 months").
public enum SaveOfferTerms: Hashable, Sendable {
    case discount(percent: Int, duration: CouponDuration)
    case freePeriod(FreePeriod)

    /// Why an offer's terms cannot be read from its config.
    public struct InvalidOffer: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Reads the terms of a cancel-flow offer. `value` is a percent for `discount` (1–100) and a
    /// count of `freePeriodUnit` for `free_trial` / `free_extension`.
    public init(
        offer: CancelFlow.Offer, couponDuration: CouponDuration, freePeriodUnit: FreePeriodUnit = .months
    ) throws(InvalidOffer) {
        guard let value = Int(offer.value.trimmingCharacters(in: .whitespaces)) else {
            throw InvalidOffer(description: "offer value \"\(offer.value)\" is not a whole number")
        }
        switch offer.type {
        case .discount:
            guard (1...100).contains(value) else {
                throw InvalidOffer(description: "a discount must be 1–100 percent, got \(value)")
            }
            if case .repeating(let months) = couponDuration, months < 1 {
                throw InvalidOffer(description: "a repeating discount needs at least 1 month, got \(months)")
            }
            self = .discount(percent: value, duration: couponDuration)
        case .freeTrial, .freeExtension:
            guard value > 0 else { throw InvalidOffer(description: "a free period must be positive, got \(value)") }
            self = .freePeriod(freePeriodUnit == .days ? .days(value) : .months(value))
        case .unknown(let raw):
            throw InvalidOffer(description: "unknown offer type \"\(raw)\"")
        }
    }

    public enum FreePeriodUnit: String, Hashable, Sendable, Codable {
        case days, months
    }

    /// "40% off for 3 months", "40% off forever", "40% off your next payment", "1 month free".
    public var message: String {
        switch self {
        case .discount(let percent, .once): "\(percent)% off your next payment"
        case .discount(let percent, .repeating(let months)):
            "\(percent)% off for \(months) \(months == 1 ? "month" : "months")"
        case .discount(let percent, .forever): "\(percent)% off forever"
        case .freePeriod(.days(let days)): "\(days) \(days == 1 ? "day" : "days") free"
        case .freePeriod(.months(let months)): "\(months) \(months == 1 ? "month" : "months") free"
        }
    }

    /// The `SaveOfferResult` returned by `acceptSaveOffer`.
    public var result: SaveOfferResult {
        switch self {
        case .discount(let percent, let duration):
            let months: Int? = if case .repeating(let months) = duration { months } else { nil }
            return SaveOfferResult(message: message, discountPercent: percent, durationMonths: months)
        case .freePeriod(.months(let months)):
            return SaveOfferResult(message: message, discountPercent: nil, durationMonths: months)
        case .freePeriod(.days):
            return SaveOfferResult(message: message)
        }
    }
}

extension SaveOfferTerms {
    /// What a period at `price` costs with these terms: the discounted price for a discount, nil
    /// for a free period (nothing is charged during it).
    public func discountedPrice(of price: Price) -> Price? {
        guard case .discount(let percent, _) = self else { return nil }
        return Price(
            amountMicros: Money.discounted(micros: price.amountMicros, percentOff: percent, currencyCode: price.currencyCode),
            currencyCode: price.currencyCode
        )
    }
}
