import Foundation
import RetentionDomain
import SaveDeskAPI

extension SubscriptionService {
    /// Records how a cancel flow ended. Answers must name questions and options of the config.
    func submitCancelFlowResponse(
        _ response: Schemas.CancelFlowResponse, idempotencyKey: String?
    ) async throws -> Schemas.StatusResponse {
        _ = try config.requireProduct(response.productId)
        try validate(response)
        let answers = try ChangeTransaction.json(response.answers)
        return try await changes.mutate(
            operation: "submitCancelFlowResponse", request: response, idempotencyKey: idempotencyKey,
            customerId: response.userId, action: "cancel_flow.response"
        ) { data, now in
            _ = try await data.customers.inScope(response.userId)
            let id = "cr_" + UUID().uuidString.lowercased()
            let actor = RequestScope.current?.actor ?? "app"
            let livemode = RequestScope.current?.livemode ?? false
            try await data.cancelFlow.insert(.init(
                id: id, customerId: response.userId, productId: response.productId, outcome: response.outcome.rawValue,
                offerShown: response.offerShown, offerAccepted: response.offerAccepted, pauseShown: response.pauseShown,
                pauseAccepted: response.pauseAccepted, pauseDurationDays: response.pauseDurationDays,
                lastStepSeen: response.lastStepSeen,
                answers: response.answers.map { .init(questionId: $0.questionId, optionId: $0.selectedOptionId, freeText: $0.freeText) },
                answersJSON: answers, variantId: response.variantId.map(String.init), actor: actor, livemode: livemode, createdAt: now
            ))
            return Change(output: Schemas.StatusResponse(status: "recorded"), before: nil, after: nil)
        }
    }

    private func validate(_ response: Schemas.CancelFlowResponse) throws(SaveDeskError) {
        let questions = config.cancelFlow.config.questions
        guard response.lastStepSeen >= 0, response.lastStepSeen <= questions.count else {
            throw .badRequest("last_step_seen must be between 0 and \(questions.count), got \(response.lastStepSeen)", code: "invalid_last_step")
        }
        if let days = response.pauseDurationDays, !(1...config.cancelFlow.maxPauseDays).contains(days) {
            throw .badRequest("pause_duration_days must be between 1 and \(config.cancelFlow.maxPauseDays), got \(days)", code: "invalid_pause_duration")
        }
        for (index, answer) in response.answers.enumerated() {
            guard let question = questions.first(where: { $0.id == answer.questionId }) else {
                throw .unprocessable("answers[\(index)]: there is no question \(answer.questionId)", code: "unknown_question")
            }
            if let option = answer.selectedOptionId, !question.options.contains(where: { $0.id == option }) {
                throw .unprocessable("answers[\(index)]: question \(question.id) has no option \(option)", code: "unknown_option")
            }
        }
    }

    /// The customer's entitlements (web and App Store), after settling due billing.
    func entitlements(userId: String) async throws -> [Entitlement] {
        let now = clock.now()
        return try await store.transaction(key: "customer:" + userId) { data in
            _ = try await data.customers.inScope(userId)
            try await changes.settlement.settle(data, customerId: userId, now: now.unixSeconds)
            return try await data.ledger.subscriptions(customerId: userId).map {
                EntitlementMapping.entitlement($0, now: now, policy: config.billing.lifecyclePolicy)
            }
        }
    }
}
