import Foundation
import RetentionDomain
import SaveDeskAPI

/// The primitives the seeds name, as server operations on the ledger.
extension SubscriptionService {
    typealias Schemas = Components.Schemas

    /// One change to the subscription a (customer, product) request targets: load it, let the
    /// ledger change it, save it, and audit it with its before and after, in one transaction. The
    /// body sets `wroteMore` when it wrote something besides the subscription (a discount, a
    /// charge); a request that changes nothing is answered without an audit row.
    ///
    /// When Stripe keeps the subscription, `stripe` says what the change sends there (from the
    /// subscription before and after a rolled-back preview of it; nil: nothing to send), and the
    /// change is made as `StripeBilling` describes: Stripe first, then here with Stripe's answer.
    func changeSubscription<Request: Encodable & Sendable, Output: Codable & Sendable>(
        _ scope: RequestScope, operation: String, request: Request, idempotencyKey: String?, userId: String, product: ServerConfig.ProductConfig,
        action: String, verb: String,
        stripe change: (@Sendable (_ before: SubscriptionRecord, _ after: SubscriptionRecord, _ wroteMore: Bool) -> StripeBilling.Change?)? = nil,
        _ body: (_ subscription: inout SubscriptionRecord, _ data: Repositories, _ now: Int64, _ wroteMore: inout Bool) async throws -> Output
    ) async throws -> Output {
        var sent: (answer: StripeSubscription, key: String)?
        if let stripe, let change {
            sent = try await sendToStripe(
                stripe, scope, operation: operation, idempotencyKey: idempotencyKey, userId: userId, product: product, verb: verb,
                change: change, body
            )
        }
        return try await changes.mutate(
            scope, operation: operation, request: request, idempotencyKey: idempotencyKey, customerId: userId, action: action
        ) { data, now in
            let customer = try await data.customers.inScope(userId, scope, at: now)
            var subscription = try await data.ledger.target(customer: customer, product: product, action: verb)
            let before = subscription
            var wroteMore = false
            let output = try await body(&subscription, data, now, &wroteMore)
            if let sent {
                StripeBilling.apply(sent.answer, to: &subscription, syncedAt: now)
                try await data.stripe.finishAction(key: sent.key, at: now, outcome: "applied")
            }
            if subscription != before {
                subscription.updatedAt = now
                try await data.ledger.update(subscription)
            }
            return Change(output: output, before: before, after: subscription, changed: wroteMore || subscription != before)
        }
    }

    func acceptSaveOffer(_ request: Schemas.UserProductRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.SaveOfferResult {
        let product = try config.requireProduct(request.productId)
        guard let offer = config.cancelFlow.config.offer, offer.enabled, let terms = config.cancelFlow.offerTerms else {
            throw SaveDeskError.unprocessable("the cancel flow has no save offer enabled", code: "no_offer")
        }
        return try await changeSubscription(
            scope, operation: "acceptSaveOffer", request: request, idempotencyKey: idempotencyKey, userId: request.userId,
            product: product, action: "subscription.accept_offer", verb: "discount",
            stripe: { before, after, wroteMore in
                var change = StripeBilling.Change()
                if !before.willRenew { change.form.add("cancel_at_period_end", false) }
                switch terms {
                case .discount(let percent, let duration):
                    guard wroteMore else { return change.form.pairs.isEmpty ? nil : change }
                    change.coupon = (percent, duration)
                case .freePeriod:
                    // A free period moves the next charge: the trial (Stripe's way of not charging) runs to the new date.
                    guard let end = after.trialEndsAt ?? after.currentPeriodEnd, end != (before.trialEndsAt ?? before.currentPeriodEnd) else { break }
                    change.form.add("trial_end", end)
                    change.form.add("proration_behavior", "none")
                }
                return change.form.pairs.isEmpty && change.coupon == nil ? nil : change
            }
        ) { subscription, data, now, wroteMore in
            let existing = try await data.ledger.discounts(subscriptionId: subscription.id)
            let (discount, result) = try ledger.acceptOffer(
                &subscription, terms: terms, existing: existing, productName: product.displayName, now: now
            )
            if let discount {
                try await data.ledger.insert(discount)
                wroteMore = true
            }
            return Schemas.SaveOfferResult(
                message: result.message, discountPercent: result.discountPercent, durationMonths: result.durationMonths
            )
        }
    }

    func pauseSubscription(_ request: Schemas.PauseRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.PauseResponse {
        let product = try config.requireProduct(request.productId)
        let settings = config.cancelFlow
        let now = clock.now(scope)
        let days: Int
        if let requested = request.pauseDurationDays {
            if let problem = CancelFlow.PauseLength.problem(requested, maximumDays: settings.maxPauseDays) {
                throw SaveDeskError.unprocessable(problem, code: "invalid_pause_duration")
            }
            days = requested
        } else {
            guard let optionId = request.pauseOptionId ?? settings.defaultPauseOptionId else {
                throw SaveDeskError.unprocessable("name pause_duration_days or pause_option_id: this cancel flow has no default pause option", code: "missing_pause_duration")
            }
            guard let option = settings.config.pause?.options.first(where: { $0.id == optionId }) else {
                throw SaveDeskError.notFound("there is no pause option \(optionId)", code: "unknown_pause_option")
            }
            guard let optionDays = option.durationDays(from: now) else {
                throw SaveDeskError.unprocessable("pause option \(optionId) (\(option.label)) has already passed", code: "pause_option_expired")
            }
            days = optionDays
        }
        return try await changeSubscription(
            scope, operation: "pauseSubscription", request: request, idempotencyKey: idempotencyKey, userId: request.userId,
            product: product, action: "subscription.pause", verb: "pause",
            stripe: { [behavior = stripe?.settings.pauseBehavior ?? "void"] _, after, _ in
                var change = StripeBilling.Change()
                change.form.add("pause_collection[behavior]", behavior)
                if let resumes = after.pauseResumesAt { change.form.add("pause_collection[resumes_at]", resumes) }
                return change
            }
        ) { subscription, _, now, _ in
            let resumes = try ledger.pause(&subscription, days: days, productName: product.displayName, now: now)
            return Schemas.PauseResponse(resumesAt: Date(unixSeconds: resumes))
        }
    }

    func resumeSubscription(_ request: Schemas.UserProductRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.ResumeResponse {
        let product = try config.requireProduct(request.productId)
        return try await changeSubscription(
            scope, operation: "resumeSubscription", request: request, idempotencyKey: idempotencyKey, userId: request.userId,
            product: product, action: "subscription.resume", verb: "resume",
            stripe: { _, _, _ in
                var change = StripeBilling.Change()
                change.form.add("pause_collection", "")  // an empty value clears the pause
                return change
            }
        ) { subscription, _, now, _ in
            try ledger.resume(&subscription, productName: product.displayName, now: now)
            return Schemas.ResumeResponse(status: subscription.status, resumedAt: Date(unixSeconds: now))
        }
    }

    func cancelSubscription(
        _ request: Schemas.CancelRequest, scope: RequestScope, idempotencyKey: String?, reason: String? = nil
    ) async throws -> Schemas.CancelResponse {
        let product = try config.requireProduct(request.productId)
        let immediate = request.immediate ?? false
        return try await changeSubscription(
            scope, operation: "cancelSubscription", request: request, idempotencyKey: idempotencyKey, userId: request.userId,
            product: product, action: immediate ? "subscription.cancel_now" : "subscription.cancel_at_period_end", verb: "cancel",
            stripe: { _, after, _ in
                var change = StripeBilling.Change()
                change.cancelNow = immediate
                if !immediate { change.form.add("cancel_at_period_end", true) }
                if let reason = after.cancelReason { change.form.add("cancellation_details[comment]", String(reason.prefix(500))) }
                return change
            }
        ) { subscription, data, now, _ in
            let latestReason = try await latestCancelReason(data, customerId: request.userId, productId: product.id)
            let (cancelledAt, accessUntil) = try ledger.cancel(
                &subscription, immediate: immediate, reason: reason ?? latestReason, productName: product.displayName, now: now
            )
            return Schemas.CancelResponse(
                status: subscription.status, cancelledAt: Date(unixSeconds: cancelledAt), accessUntil: Date(unixSeconds: accessUntil)
            )
        }
    }

    func reactivateSubscription(
        _ request: Schemas.UserProductRequest, scope: RequestScope, idempotencyKey: String?
    ) async throws -> Schemas.ReactivateResponse {
        let product = try config.requireProduct(request.productId)
        return try await changeSubscription(
            scope, operation: "reactivateSubscription", request: request, idempotencyKey: idempotencyKey, userId: request.userId,
            product: product, action: "subscription.reactivate", verb: "reactivate",
            stripe: { _, _, _ in
                var change = StripeBilling.Change()
                change.form.add("cancel_at_period_end", false)
                return change
            }
        ) { subscription, _, _, _ in
            try ledger.reactivate(&subscription, productName: product.displayName)
            return Schemas.ReactivateResponse(
                status: subscription.status, renewsAt: subscription.currentPeriodEnd.map(Date.init(unixSeconds:))
            )
        }
    }

    /// The reason of the customer's latest cancel-flow answer for a product, recorded with a cancellation.
    private func latestCancelReason(_ data: Repositories, customerId: String, productId: String) async throws -> String? {
        guard let stored = try await data.cancelFlow.latestAnswers(customerId: customerId, productId: productId) else { return nil }
        let answers = try JSONDecoder().decode([Schemas.CancelFlowAnswer].self, from: Data(stored.utf8))
        let questions = config.cancelFlow.config.questions
        return answers.compactMap { answer -> String? in
            if let text = answer.freeText { return text }
            let question = questions.first { $0.id == answer.questionId }
            return question?.options.first { $0.id == answer.selectedOptionId }?.label
        }.first
    }
}
