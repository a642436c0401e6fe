import Foundation
import RetentionDomain
import SaveDeskAPI

extension SubscriptionService {
    /// Records how a cancel flow ended. Answers must name questions and options of the config.
    func submitCancelFlowResponse(
        _ response: Schemas.CancelFlowResponse, scope: RequestScope, idempotencyKey: String?
    ) async throws -> Schemas.StatusResponse {
        _ = try config.requireProduct(response.productId)
        try validate(response)
        let answers = try ChangeTransaction.json(response.answers)
        return try await changes.mutate(
            scope, operation: "submitCancelFlowResponse", request: response, idempotencyKey: idempotencyKey,
            customerId: response.userId, action: "cancel_flow.response"
        ) { data, now in
            try await changes.customer(data, id: response.userId, scope: scope, now: now)
            let id = "cr_" + UUID.random().uuidString.lowercased()
            let written = data.cancelFlow.inserts(.init(
                id: id, customerId: response.userId, productId: response.productId, outcome: response.outcome.rawValue,
                offerShown: response.offerShown, offerAccepted: response.offerAccepted, pauseShown: response.pauseShown,
                pauseAccepted: response.pauseAccepted, pauseDurationDays: response.pauseDurationDays,
                lastStepSeen: response.lastStepSeen,
                answers: response.answers.map { .init(questionId: $0.questionId, optionId: $0.selectedOptionId, freeText: $0.freeText) },
                answersJSON: answers, variantId: response.variantId.map(String.init), actor: scope.actor, livemode: scope.livemode, createdAt: now
            ))
            return Change(output: Schemas.StatusResponse(status: "recorded"), before: nil, after: nil, writing: written)
        }
    }

    private func validate(_ response: Schemas.CancelFlowResponse) throws(SaveDeskError) {
        let questions = config.cancelFlow.config.questions
        guard response.lastStepSeen >= 0, response.lastStepSeen <= questions.count else {
            throw .unprocessable("last_step_seen must be between 0 and \(questions.count) (the questions of this cancel flow), got \(response.lastStepSeen)", code: "invalid_last_step")
        }
        if let days = response.pauseDurationDays,
           let problem = CancelFlow.PauseLength.problem(days, maximumDays: config.cancelFlow.maxPauseDays) {
            throw .unprocessable(problem, code: "invalid_pause_duration")
        }
        for (index, answer) in response.answers.enumerated() {
            let domain = CancelFlow.Answer(questionId: answer.questionId, selectedOptionId: answer.selectedOptionId)
            if let problem = config.cancelFlow.config.problem(with: domain) {
                throw .unprocessable("answers[\(index)]: \(problem)", code: problem.code)
            }
        }
    }

    /// The customer's entitlements (web and App Store), after settling due billing.
    func entitlements(userId: String, scope: RequestScope) async throws -> [Entitlement] {
        let now = clock.now(scope)
        return try await store.transaction(key: "customer:" + userId) { data in
            _ = try await data.customers.lookup(userId, scope)
            try await changes.settlement.settle(data, customerId: userId, now: now.unixSeconds, scope: scope)
            return try await data.ledger.subscriptions(customerId: userId).map {
                EntitlementMapping.entitlement($0, now: now, policy: config.billing.lifecyclePolicy)
            }
        }
    }
}
