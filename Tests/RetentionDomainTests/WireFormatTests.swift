import Foundation
import Testing

@testable import RetentionDomain

@Suite("Wire shapes")
struct WireFormatTests {
    /// Decodes a fixture and re-encodes it; the JSON must be the same document.
    func roundTrip<T: Codable>(_ type: T.Type, _ fixture: String) throws -> T {
        let original = try Fixture.data(fixture)
        let value = try WireFormat.decoder().decode(T.self, from: original)
        let encoded = try WireFormat.encoder().encode(value)
        #expect(try JSONValue.parse(encoded) == JSONValue.parse(original), "\(fixture) changed on re-encoding")
        return value
    }

    @Test func productRoundTrips() throws {
        let product = try roundTrip(Product.self, "product")
        #expect(product.webPrice == Price(amountMicros: 7_990_000, currencyCode: "USD"))
        #expect(product.billingInterval == .month)
    }

    @Test func entitlementRoundTrips() throws {
        let entitlement = try roundTrip(Entitlement.self, "entitlement")
        #expect(entitlement.source == .storeKit)
        #expect(entitlement.status == .gracePeriod)
        #expect(entitlement.trialEndsAt == nil)
        #expect(WireFormat.formatDate(entitlement.gracePeriodEndsAt!) == "2026-12-17T09:30:00Z")
    }

    @Test func cancelFlowConfigRoundTrips() throws {
        let config = try roundTrip(CancelFlow.Config.self, "cancel_flow_config")
        #expect(config.questions.count == 2)
        #expect(config.offer?.value == "40")
        #expect(config.pause?.options[1].durationType == .fixedDate)
        #expect(config.variantId == 4021)
    }

    @Test func disabledCancelFlowStillSendsQuestions() throws {
        let config = try roundTrip(CancelFlow.Config.self, "cancel_flow_config_disabled")
        #expect(!config.enabled)
        let encoded = try JSONValue.parse(WireFormat.encoder().encode(config))
        #expect(encoded == .object(["enabled": .bool(false), "questions": .array([])]))
    }

    @Test func cancelFlowResponseRoundTrips() throws {
        let response = try roundTrip(CancelFlow.Response.self, "cancel_flow_response")
        #expect(response.outcome == .paused)
        #expect(response.answers[1] == CancelFlow.Answer(questionId: 2, freeText: "Too expensive right now"))
    }

    @Test func otherShapesRoundTrip() throws {
        let result = try roundTrip(SaveOfferResult.self, "save_offer_result")
        #expect(result.durationMonths == 3)
        let campaign = try roundTrip(MigrationCampaign.self, "migration_campaign")
        #expect(campaign.perProductPrompts?["premium_yearly"]?.discountPercent == 25)
        let apple = try roundTrip(AppStore.SubscriptionSummary.self, "apple_subscription")
        #expect(apple.statusCode == .active)
        let reason = try roundTrip(IneligibleReason.self, "ineligible_reason")
        #expect(reason.code == .tenureTooShort)
        let offer = try roundTrip(MigrationOffer.OfferData.self, "offer_data")
        #expect(offer.freeTrialDays == 9)
    }

    @Test func perProductPromptKeysAreNotRewritten() throws {
        // Product ids are dictionary keys: a snake→camel key strategy would corrupt them.
        let campaign = try WireFormat.decoder().decode(MigrationCampaign.self, from: Fixture.data("migration_campaign"))
        #expect(campaign.perProductPrompts?.keys.sorted() == ["premium_yearly"])
    }

    @Test func unknownEnumValuesAreKept() throws {
        let json = """
            {"id": "e1", "product_id": "p", "product_type": "bundle", "source": "galaxy_store", "status": "on_hold",
             "is_active": false, "purchased_at": "2026-01-01T00:00:00Z", "will_renew": false, "is_trial": false}
            """
        let entitlement = try WireFormat.decoder().decode(Entitlement.self, from: Data(json.utf8))
        #expect(entitlement.status == .unknown("on_hold"))
        #expect(entitlement.source == .unknown("galaxy_store"))
        #expect(entitlement.productType == .unknown("bundle"))
        #expect(!entitlement.status.isKnown)
        let encoded = try JSONValue.parse(WireFormat.encoder().encode(entitlement))
        #expect(encoded == (try JSONValue.parse(Data(json.utf8))), "unknown values re-encode as they came")

        let question = """
            {"id": 9, "order": 0, "question_text": "Rate us", "question_type": "star_rating", "is_required": false, "options": []}
            """
        let decoded = try WireFormat.decoder().decode(CancelFlow.Question.self, from: Data(question.utf8))
        #expect(decoded.questionType == .unknown("star_rating"))
        let status = try JSONDecoder().decode([AppStore.SubscriptionStatus].self, from: Data("[1, 4, 9]".utf8))
        #expect(status == [.active, .gracePeriod, .unknown(9)])
        let intents = try JSONDecoder().decode([AppStore.ExpirationIntent].self, from: Data("[2, 7]".utf8))
        #expect(intents == [.billingError, .unknown(7)])
    }

    @Test func americanSpellingOfCancelledIsAccepted() throws {
        let status = try WireFormat.decoder().decode([Entitlement.Status].self, from: Data(#"["canceled", "cancelled"]"#.utf8))
        #expect(status == [.cancelled, .cancelled])
        #expect(String(data: try WireFormat.encoder().encode(status), encoding: .utf8) == #"["cancelled","cancelled"]"#)
    }

    @Test func missingOptionalFieldsDecodeAsNil() throws {
        let json = """
            {"id": "e2", "product_id": "basic_monthly", "product_type": "auto_renewable_subscription",
             "source": "web_checkout", "status": "active", "is_active": true,
             "purchased_at": "2026-01-01T00:00:00Z", "will_renew": true, "is_trial": false}
            """
        let entitlement = try WireFormat.decoder().decode(Entitlement.self, from: Data(json.utf8))
        #expect(entitlement.expiresAt == nil && entitlement.pausedAt == nil && entitlement.storekitOriginalTransactionId == nil)
        let config = try WireFormat.decoder().decode(CancelFlow.Config.self, from: Data(#"{"enabled": true, "questions": []}"#.utf8))
        #expect(config.offer == nil && config.pause == nil && config.variantId == nil)
        let campaign = """
            {"should_show": true, "eligible_product_ids": [], "discount_percent": 10, "min_subscription_days": 0,
             "free_trial_days": 0, "title": "t", "message": "m"}
            """
        let decoded = try WireFormat.decoder().decode(MigrationCampaign.self, from: Data(campaign.utf8))
        #expect(decoded.ctaText == nil && decoded.rolloutPercent == nil && decoded.perProductPrompts == nil)
        #expect(decoded.effectiveRolloutPercent == 100)
        #expect(decoded.effectiveJurisdictions == ["US"])
    }

    @Test func missingRequiredFieldIsAnError() {
        let json = #"{"id": 1, "order": 0, "label": "x", "triggers_offer": true}"#
        #expect(throws: DecodingError.self) {
            try WireFormat.decoder().decode(CancelFlow.Option.self, from: Data(json.utf8))
        }
    }

    @Test func datesHaveNoFractionalSeconds() throws {
        let date = Date(timeIntervalSince1970: 1_795_345_808.734)
        #expect(WireFormat.formatDate(date) == "2026-11-22T11:10:08Z")
        let encoded = String(data: try WireFormat.encoder().encode([date]), encoding: .utf8)
        #expect(encoded == #"["2026-11-22T11:10:08Z"]"#)
    }

    @Test func datesDecodeWithOrWithoutFractionsAndOffsets() throws {
        let expected = Date(timeIntervalSince1970: 1_795_345_808)
        #expect(WireFormat.parseDate("2026-11-22T11:10:08Z") == expected)
        #expect(WireFormat.parseDate("2026-11-22T12:10:08+01:00") == expected)
        let fractional = try #require(WireFormat.parseDate("2026-11-22T11:10:08.500Z"))
        #expect(abs(fractional.timeIntervalSince(expected) - 0.5) < 0.001)
        #expect(WireFormat.parseDate("22/11/2026") == nil)
        #expect(throws: DecodingError.self) {
            try WireFormat.decoder().decode([Date].self, from: Data(#"["tomorrow"]"#.utf8))
        }
        #expect(WireFormat.parseDate("2026-11-22T12:10:08+0100") == expected)
        #expect(WireFormat.parseDate("2026-11-22t11:10:08z") == expected)
        #expect(WireFormat.parseDate("2026-11-22T05:08:08-06:02") == expected)
    }

    /// A field out of its range is refused, not rolled over (the fuzzer's "12:99" was a 200).
    @Test func outOfRangeFieldsAreRefused() {
        for text in ["2024-01-01T12:99:00Z", "2024-13-01T00:00:00Z", "2024-00-10T00:00:00Z", "2023-02-29T00:00:00Z",
                     "2024-04-31T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T12:00:60Z",
                     "2024-01-01T12:00:00+24:00", "2024-01-01T12:00:00+01:60", "2024-01-01T12:00:00", "2024-01-01 12:00:00Z",
                     "2024-01-01T12:00:00.Z", "2024-01-01T12:00:00Zjunk", "+2024-01-01T12:00:00Z", "２０２４-01-01T12:00:00Z"] {
            #expect(WireFormat.parseDate(text) == nil, "\(text)")
        }
        #expect(WireFormat.parseDate("2024-02-29T23:59:59Z") != nil)
        #expect(WireFormat.parseDate("2000-02-29T00:00:00Z") != nil && WireFormat.parseDate("1900-02-29T00:00:00Z") == nil)
    }

    /// Written and read by hand (no Calendar, TimeZone or ICU): Foundation's ISO 8601 style is
    /// the oracle, over random instants from 1583 to 9999 (before the Gregorian reform Foundation
    /// counts Julian days; the wire's calendar is the proleptic Gregorian one) and random offsets
    /// and fractions.
    @Test func datesAgreeWithFoundationsISO8601() throws {
        var generator = SystemRandomNumberGenerator()
        let utc = Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: 0)!)
        for _ in 0..<3_000 {
            let seconds = Double(Int64.random(in: -12_212_553_600...253_402_300_799, using: &generator))
            let date = Date(timeIntervalSince1970: seconds)
            let text = WireFormat.formatDate(date)
            #expect(text == utc.format(date), "\(seconds)")
            #expect(WireFormat.parseDate(text) == date, "\(text)")
            let offsetMinutes = Int.random(in: -(18 * 60)...(18 * 60), using: &generator)
            let zone = Date.ISO8601FormatStyle(timeZone: TimeZone(secondsFromGMT: offsetMinutes * 60)!)
            let shifted = zone.format(date)
            #expect(WireFormat.parseDate(shifted) == (try? zone.parse(shifted)), "\(shifted)")
            let millis = Int.random(in: 0...999, using: &generator)
            let fractional = String(text.dropLast()) + "." + String(String(millis + 1000).dropFirst()) + "Z"
            let parsed = try #require(WireFormat.parseDate(fractional))
            #expect(abs(parsed.timeIntervalSince(date) - Double(millis) / 1000) < 0.000_1, "\(fractional)")
        }
    }

    /// Dates beyond the four-digit years are written as the nearest end of the range (the
    /// conversion to whole seconds trapped on them before).
    @Test func datesOutsideFourDigitYearsAreClampedNotTrappedOn() {
        #expect(WireFormat.formatDate(Date(timeIntervalSince1970: 1e20)) == "9999-12-31T23:59:59Z")
        #expect(WireFormat.formatDate(Date(timeIntervalSince1970: -1e20)) == "0000-01-01T00:00:00Z")
        #expect(WireFormat.formatDate(.distantFuture) == "4001-01-01T00:00:00Z")
        #expect(WireFormat.parseDate(WireFormat.formatDate(Date(timeIntervalSince1970: 1e20))) != nil)
    }
}
