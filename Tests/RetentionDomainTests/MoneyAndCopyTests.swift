import Foundation
import Testing

@testable import RetentionDomain

@Suite("Money, offer copy and save-offer terms")
struct MoneyAndCopyTests {
    @Test func formatsMicros() {
        #expect(Money.format(micros: 4_990_000, currencyCode: "USD") == "$4.99")
        #expect(Money.format(micros: 12_000_000, currencyCode: "EUR") == "€12.00")
        #expect(Money.format(micros: 500_000_000, currencyCode: "JPY") == "¥500")
        #expect(Money.format(micros: 129_900_000, currencyCode: "SEK") == "129.90 SEK")
        #expect(Money.format(micros: 4_995_000, currencyCode: "USD") == "$5.00", "half a cent rounds up")
        #expect(Money.format(minorUnits: -250, currencyCode: "USD") == "-$2.50")
        #expect(Money.format(minorUnits: 5, currencyCode: "GBP") == "£0.05")
    }

    @Test func convertsBetweenMicrosAndCents() {
        #expect(Money.minorUnits(fromMicros: 4_990_000, currencyCode: "USD") == 499)
        #expect(Money.micros(fromMinorUnits: 499, currencyCode: "USD") == 4_990_000)
        #expect(Money.minorUnits(fromMicros: 500_000_000, currencyCode: "JPY") == 500)
    }

    @Test func discountsRoundToTheCent() {
        #expect(Money.discounted(micros: 9_990_000, percentOff: 40, currencyCode: "USD") == 5_990_000, "5.994 → 5.99")
        #expect(Money.discounted(micros: 7_990_000, percentOff: 20, currencyCode: "USD") == 6_390_000, "6.392 → 6.39")
        #expect(Money.discounted(micros: 9_990_000, percentOff: 100, currencyCode: "USD") == 0)
        #expect(Money.discounted(micros: 1_000_000_000, percentOff: 15, currencyCode: "JPY") == 850_000_000)
    }

    @Test func pricesCarryTheirInterval() {
        let price = Price(amountMicros: 4_990_000, currencyCode: "USD")
        #expect(Money.format(price, per: .month) == "$4.99/month")
        #expect(Money.format(price, per: .year) == "$4.99/year")
        #expect(Money.format(price, per: nil) == "$4.99")
        #expect(Money.suffix(.week) == "/week")
    }

    @Test func discountTemplates() {
        #expect(OfferCopy.render("Save {{discount}}%", discountPercent: 40) == "Save 40%")
        #expect(OfferCopy.render("{{ discount }}% off, {{discount}}% forever", discountPercent: 15) == "15% off, 15% forever")
        #expect(OfferCopy.render("Hi {{name}}, save {{discount}}%", discountPercent: 5) == "Hi {{name}}, save 5%")
        #expect(OfferCopy.render("Broken {{discount", discountPercent: 5) == "Broken {{discount")
        #expect(OfferCopy.render("No placeholders", discountPercent: 5) == "No placeholders")
    }

    static func offer(_ type: CancelFlow.OfferType, _ value: String) -> CancelFlow.Offer {
        CancelFlow.Offer(enabled: true, title: "t", body: "b", ctaText: "c", type: type, value: value)
    }

    @Test func saveOfferMessages() throws {
        #expect(try SaveOfferTerms(offer: Self.offer(.discount, "40"), couponDuration: .repeating(months: 3)).message
            == "40% off for 3 months")
        #expect(SaveOfferTerms.discount(percent: 25, duration: .repeating(months: 1)).message == "25% off for 1 month")
        #expect(SaveOfferTerms.discount(percent: 20, duration: .forever).message == "20% off forever")
        #expect(SaveOfferTerms.discount(percent: 50, duration: .once).message == "50% off your next payment")
        #expect(try SaveOfferTerms(offer: Self.offer(.freeExtension, "1"), couponDuration: .once).message == "1 month free")
        #expect(try SaveOfferTerms(offer: Self.offer(.freeTrial, "2"), couponDuration: .once).message == "2 months free")
        #expect(try SaveOfferTerms(offer: Self.offer(.freeTrial, "14"), couponDuration: .once, freePeriodUnit: .days)
            .message == "14 days free")
    }

    @Test func saveOfferResults() {
        #expect(SaveOfferTerms.discount(percent: 40, duration: .repeating(months: 3)).result
            == SaveOfferResult(message: "40% off for 3 months", discountPercent: 40, durationMonths: 3))
        #expect(SaveOfferTerms.discount(percent: 20, duration: .forever).result
            == SaveOfferResult(message: "20% off forever", discountPercent: 20, durationMonths: nil))
        #expect(SaveOfferTerms.freePeriod(.months(1)).result == SaveOfferResult(message: "1 month free", durationMonths: 1))
    }

    @Test func invalidOffersAreNamed() {
        #expect(throws: SaveOfferTerms.InvalidOffer(description: "offer value \"forty\" is not a whole number")) {
            try SaveOfferTerms(offer: Self.offer(.discount, "forty"), couponDuration: .once)
        }
        #expect(throws: SaveOfferTerms.InvalidOffer(description: "a discount must be 1–100 percent, got 140")) {
            try SaveOfferTerms(offer: Self.offer(.discount, "140"), couponDuration: .once)
        }
        #expect(throws: SaveOfferTerms.InvalidOffer(description: "a repeating discount needs at least 1 month, got 0")) {
            try SaveOfferTerms(offer: Self.offer(.discount, "10"), couponDuration: .repeating(months: 0))
        }
        #expect(throws: SaveOfferTerms.InvalidOffer(description: "a free period must be positive, got 0")) {
            try SaveOfferTerms(offer: Self.offer(.freeTrial, "0"), couponDuration: .once)
        }
        #expect(throws: SaveOfferTerms.InvalidOffer(description: "unknown offer type \"bogo\"")) {
            try SaveOfferTerms(offer: Self.offer(.unknown("bogo"), "1"), couponDuration: .once)
        }
    }
}
