import Testing

@testable import RetentionDomain

@Suite("Apple's cancel page: the decision")
struct RetentionMessagingDecisionTests {
    typealias RM = RetentionMessaging

    static let stay = RM.Message(id: "stay", text: "Stay", identifiers: ["en-US": "id-stay-en", "fr-FR": "id-stay-fr"])
    static let half = RM.Message(id: "half", text: "Half off", identifiers: ["en-US": "id-half-en"])
    static let basic = RM.Message(id: "basic", text: "Try Basic", identifiers: ["en-US": "id-basic-en"])
    static let settings = RM.Settings(
        messages: [stay, half, basic],
        rules: [
            RM.Rule(name: "basic", messageId: "basic", offer: .alternateProduct(productId: "app.basic", billingPlanType: nil),
                    conditions: .init(productIds: ["premium_monthly"], reasonOptionIds: [13])),
            RM.Rule(name: "half", messageId: "half", offer: .promotionalOffer(offerIdentifier: "stay50"),
                    conditions: .init(minTenureDays: 90, offerUnused: true)),
        ],
        defaultMessageId: "stay", fallbackLocale: "en-US", holdoutPercent: 0
    )

    func decide(_ facts: RM.Facts, locale: String = "en-US", settings: RM.Settings = settings, otid: String = "2000000000000001") -> RM.Choice {
        RM.decide(settings, facts: facts, originalTransactionId: otid, userLocale: locale)
    }

    @Test func rulesApplyInOrderThenTheDefault() {
        // Both rules hold: the first one answers.
        let both = RM.Facts(productId: "premium_monthly", tenureDays: 200, answeredOptionIds: [13], cancelFlows: 1)
        #expect(decide(both).kind == "alternate_product")
        // Only the second.
        #expect(decide(RM.Facts(productId: "premium_monthly", tenureDays: 200)).kind == "promotional_offer")
        // The offer was used: the default message.
        let used = RM.Facts(productId: "premium_monthly", tenureDays: 200, offersUsed: ["stay50"])
        guard case .answer(let rule, let message, let identifier, _, let offer) = decide(used) else {
            Issue.record("expected an answer")
            return
        }
        #expect(rule == nil && message.id == "stay" && identifier == "id-stay-en" && offer == .none)
        // Nothing known of the subscriber: conditions on facts do not hold.
        #expect(decide(RM.Facts()).kind == "message")
        // With no default message, no answer.
        var quiet = Self.settings
        quiet.defaultMessageId = nil
        #expect(decide(RM.Facts(), settings: quiet) == .noAnswer)
    }

    @Test func aRuleWhoseMessageHasNoLocaleGivesWayToTheNext() {
        // "half" has English only, and English is the fallback: a German customer still gets it.
        #expect(decide(RM.Facts(tenureDays: 100), locale: "de-DE").kind == "promotional_offer")
        var frenchOnly = Self.settings
        frenchOnly.fallbackLocale = "fr-FR"
        // No English fallback: "half" has no message for de-DE, the default (which has fr-FR) answers.
        guard case .answer(_, let message, let identifier, let locale, _) = decide(RM.Facts(tenureDays: 100), locale: "de-DE", settings: frenchOnly)
        else {
            Issue.record("expected an answer")
            return
        }
        #expect(message.id == "stay" && identifier == "id-stay-fr" && locale == "fr-FR")
    }

    @Test(arguments: [("fr-CA", "fr-FR"), ("en_US", "en-US"), ("EN-us", "en-US"), ("de-DE", "en-US"), ("fr", "fr-FR")])
    func locales(asked: String, chosen: String) {
        #expect(RM.locale(for: asked, available: ["en-US", "fr-FR"], fallback: "en-US") == chosen)
    }

    @Test func theHoldoutIsStablePerSubscriberAndNearItsShare() {
        var held = Self.settings
        held.holdoutPercent = 10
        let ids = (0..<5_000).map { String(2_000_000_000_000_000 + $0) }
        let inside = ids.filter { RM.inHoldout(originalTransactionId: $0, percent: 10) }
        #expect(abs(Double(inside.count) / 50 - 10) <= 2, "\(inside.count) of 5000")
        for id in inside.prefix(20) {
            #expect(decide(RM.Facts(tenureDays: 500), settings: held, otid: id) == .holdout)
            #expect(RM.inHoldout(originalTransactionId: id, percent: 11), "raising the share only adds subscribers")
        }
        #expect(!RM.inHoldout(originalTransactionId: "2000000810000007", percent: 0))
        // Independent of rollout buckets: the same id is not in both by construction.
        #expect(RM.inHoldout(originalTransactionId: "2000000810000007", percent: 10))
    }

    @Test func savedMeansRedeemedOrStillRenewing() {
        #expect(RM.saved(willRenew: false, status: .expired, redeemed: true))
        #expect(RM.saved(willRenew: true, status: .active, redeemed: false))
        #expect(RM.saved(willRenew: true, status: .gracePeriod, redeemed: false))
        #expect(!RM.saved(willRenew: false, status: .active, redeemed: false))
        #expect(!RM.saved(willRenew: true, status: .expired, redeemed: false))
        #expect(!RM.saved(willRenew: true, status: .revoked, redeemed: false))
        #expect(!RM.saved(willRenew: nil, status: nil, redeemed: false), "a subscriber the server does not know")
    }

    @Test func theTimelineSaysWhatTheCustomerSaw() {
        #expect(RM.shownSentence(kind: "promotional_offer", messageText: "Half off", offer: "stay50")
                == "Apple's cancel page showed \u{201C}Half off\u{201D} with the promotional offer stay50")
        #expect(RM.shownSentence(kind: "holdout", messageText: nil, offer: nil) == "Apple's cancel page showed its default message (holdout)")
    }
}
