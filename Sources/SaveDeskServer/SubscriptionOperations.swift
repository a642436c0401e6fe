import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI

/// The primitives the seeds name, as server operations on the ledger.
extension SubscriptionService {
    typealias Schemas = Components.Schemas

    func acceptSaveOffer(_ request: Schemas.UserProductRequest, idempotencyKey: String?) async throws -> Schemas.SaveOfferResult {
        let product = try product(request.productId)
        guard let offer = config.cancelFlow.config.offer, offer.enabled, let terms = config.cancelFlow.offerTerms else {
            throw SaveDeskError.unprocessable("the cancel flow has no save offer enabled", code: "no_offer")
        }
        return try await mutate(
            operation: "acceptSaveOffer", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "subscription.accept_offer"
        ) { db, now in
            let customer = try await customer(db, id: request.userId)
            var subscription = try await target(db, customer: customer, product: product, action: "discount")
            let before = subscription
            let existing = try await db.discounts(subscriptionId: subscription.id)
            let (discount, result) = try ledger.acceptOffer(
                &subscription, terms: terms, existing: existing, productName: product.displayName, now: now
            )
            if let discount { try await db.insert(discount, into: "discounts") }
            if subscription != before {
                subscription.updatedAt = now
                try await db.update(subscription)
            }
            return Change(
                output: Schemas.SaveOfferResult(
                    message: result.message, discountPercent: result.discountPercent, durationMonths: result.durationMonths
                ),
                before: before, after: subscription
            )
        }
    }

    func pauseSubscription(_ request: Schemas.PauseRequest, idempotencyKey: String?) async throws -> Schemas.PauseResponse {
        let product = try product(request.productId)
        let settings = config.cancelFlow
        let now = clock.now()
        let days: Int
        if let requested = request.pauseDurationDays {
            guard (1...settings.maxPauseDays).contains(requested) else {
                throw SaveDeskError.badRequest(
                    "pause_duration_days must be between 1 and \(settings.maxPauseDays), got \(requested)", code: "invalid_pause_duration"
                )
            }
            days = requested
        } else {
            guard let optionId = request.pauseOptionId ?? settings.defaultPauseOptionId else {
                throw SaveDeskError.badRequest("name pause_duration_days or pause_option_id", code: "missing_pause_duration")
            }
            guard let option = settings.config.pause?.options.first(where: { $0.id == optionId }) else {
                throw SaveDeskError.notFound("there is no pause option \(optionId)", code: "unknown_pause_option")
            }
            guard let optionDays = option.durationDays(from: now) else {
                throw SaveDeskError.unprocessable("pause option \(optionId) (\(option.label)) has already passed", code: "pause_option_expired")
            }
            days = optionDays
        }
        return try await mutate(
            operation: "pauseSubscription", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "subscription.pause"
        ) { db, now in
            let customer = try await customer(db, id: request.userId)
            var subscription = try await target(db, customer: customer, product: product, action: "pause")
            let before = subscription
            let resumes = try ledger.pause(&subscription, days: days, productName: product.displayName, now: now)
            subscription.updatedAt = now
            try await db.update(subscription)
            return Change(output: Schemas.PauseResponse(resumesAt: Date(unixSeconds: resumes)), before: before, after: subscription)
        }
    }

    func resumeSubscription(_ request: Schemas.UserProductRequest, idempotencyKey: String?) async throws -> Schemas.ResumeResponse {
        let product = try product(request.productId)
        return try await mutate(
            operation: "resumeSubscription", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "subscription.resume"
        ) { db, now in
            let customer = try await customer(db, id: request.userId)
            var subscription = try await target(db, customer: customer, product: product, action: "resume")
            let before = subscription
            try ledger.resume(&subscription, productName: product.displayName, now: now)
            subscription.updatedAt = now
            try await db.update(subscription)
            return Change(
                output: Schemas.ResumeResponse(status: subscription.status, resumedAt: Date(unixSeconds: now)),
                before: before, after: subscription
            )
        }
    }

    func cancelSubscription(
        _ request: Schemas.CancelRequest, idempotencyKey: String?, reason: String? = nil
    ) async throws -> Schemas.CancelResponse {
        let product = try product(request.productId)
        let immediate = request.immediate ?? false
        return try await mutate(
            operation: "cancelSubscription", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: immediate ? "subscription.cancel_now" : "subscription.cancel_at_period_end"
        ) { db, now in
            let customer = try await customer(db, id: request.userId)
            var subscription = try await target(db, customer: customer, product: product, action: "cancel")
            let before = subscription
            let latestReason = try await latestCancelReason(db, customerId: customer.id, productId: product.id)
            let (cancelledAt, accessUntil) = try ledger.cancel(
                &subscription, immediate: immediate, reason: reason ?? latestReason, productName: product.displayName, now: now
            )
            subscription.updatedAt = now
            try await db.update(subscription)
            return Change(
                output: Schemas.CancelResponse(
                    status: subscription.status, cancelledAt: Date(unixSeconds: cancelledAt),
                    accessUntil: Date(unixSeconds: accessUntil)
                ),
                before: before, after: subscription
            )
        }
    }

    func reactivateSubscription(
        _ request: Schemas.UserProductRequest, idempotencyKey: String?
    ) async throws -> Schemas.ReactivateResponse {
        let product = try product(request.productId)
        return try await mutate(
            operation: "reactivateSubscription", request: request, idempotencyKey: idempotencyKey,
            customerId: request.userId, action: "subscription.reactivate"
        ) { db, now in
            let customer = try await customer(db, id: request.userId)
            var subscription = try await target(db, customer: customer, product: product, action: "reactivate")
            let before = subscription
            try ledger.reactivate(&subscription, productName: product.displayName)
            subscription.updatedAt = now
            try await db.update(subscription)
            return Change(
                output: Schemas.ReactivateResponse(
                    status: subscription.status, renewsAt: subscription.currentPeriodEnd.map(Date.init(unixSeconds:))
                ),
                before: before, after: subscription
            )
        }
    }

    /// The reason of the customer's latest cancel-flow answer for a product, recorded with a cancellation.
    private func latestCancelReason(_ db: any SQLDatabase, customerId: String, productId: String) async throws -> String? {
        guard let row = try await db.select().column("answers").from("cancel_flow_responses")
            .where("customer_id", .equal, customerId).where("product_id", .equal, productId)
            .orderBy("created_at", .descending).limit(1).first()
        else { return nil }
        let answers = try JSONDecoder().decode([Schemas.CancelFlowAnswer].self, from: Data(try row.decode(column: "answers", as: String.self).utf8))
        let questions = config.cancelFlow.config.questions
        return answers.compactMap { answer -> String? in
            if let text = answer.freeText { return text }
            let question = questions.first { $0.id == answer.questionId }
            return question?.options.first { $0.id == answer.selectedOptionId }?.label
        }.first
    }
}
