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
    }
}
