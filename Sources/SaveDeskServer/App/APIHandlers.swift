import Foundation
import OpenAPIRuntime
import RetentionDomain
import SaveDeskAPI

/// Thin handlers: decode (done by the generated server), call a service, encode. Errors are
/// thrown as `SaveDeskError` and mapped to the wire envelope once, in `APIMiddleware`. Built,
/// with every service, by `SaveDeskBackend.buildApplication`. A class: the generated server
/// copies its handler for every request, and a struct of twenty services (and the converted
/// cancel flow) was a retain and a release of each, every time.
final class APIHandlers: APIProtocol {
    typealias Schemas = Components.Schemas
    let service: SubscriptionService
    let desk: DeskService
    let portal: PortalService
    let switchAndSave: SwitchAndSaveService
    let analytics: AnalyticsService
    let testClock: TestClockService
    let winBack: WinBackService
    let retention: RetentionService
    let appStore: AppStoreService
    let checkout: CheckoutService
    let upgrades: UpgradeService
    let catalog: CatalogService
    /// The cancel flow does not change while the server runs: converted once.
    let cancelFlowConfig: Schemas.CancelFlowConfig
    let readiness: Readiness
    let customers: CustomerService
    let events: EventHub
    /// Apple's cancel page.
    let retentionMessaging: RetentionMessagingService
    /// Stripe's webhook events (nil: billing is SaveDesk's own ledger).
    let stripeWebhooks: StripeWebhookService?

    init(
        service: SubscriptionService, desk: DeskService, portal: PortalService, switchAndSave: SwitchAndSaveService,
        analytics: AnalyticsService, testClock: TestClockService, winBack: WinBackService, retention: RetentionService,
        appStore: AppStoreService, checkout: CheckoutService, upgrades: UpgradeService, catalog: CatalogService,
        cancelFlowConfig: Schemas.CancelFlowConfig, readiness: Readiness, customers: CustomerService, events: EventHub,
        retentionMessaging: RetentionMessagingService, stripeWebhooks: StripeWebhookService?
    ) {
        self.service = service
        self.desk = desk
        self.portal = portal
        self.switchAndSave = switchAndSave
        self.analytics = analytics
        self.testClock = testClock
        self.winBack = winBack
        self.retention = retention
        self.appStore = appStore
        self.checkout = checkout
        self.upgrades = upgrades
        self.catalog = catalog
        self.cancelFlowConfig = cancelFlowConfig
        self.readiness = readiness
        self.customers = customers
        self.events = events
        self.retentionMessaging = retentionMessaging
        self.stripeWebhooks = stripeWebhooks
    }

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        .ok(.init(body: .json(.init(status: .alive))))
    }

    /// Ready (200) or not (503, in the envelope's shape too: `error` names the first failing check).
    func getReadiness(_ input: Operations.GetReadiness.Input) async throws -> Operations.GetReadiness.Output {
        let (ready, checks) = await readiness.check()
        let result = Dictionary(uniqueKeysWithValues: checks.map { ($0.name, $0.result) })
        let payload = Schemas.Readiness.ChecksPayload(
            store: result["store"] ?? "", migrations: result["migrations"] ?? "", jobs: result["jobs"] ?? "", draining: result["draining"] ?? ""
        )
        guard !ready else { return .ok(.init(body: .json(.init(status: .ready, checks: payload)))) }
        let failing = checks.first { $0.name == "draining" ? $0.result == "yes" : $0.result != "ok" }.map { "\($0.name): \($0.result)" } ?? ""
        RequestTrace.note { $0.code = "not_ready" }
        return .serviceUnavailable(.init(body: .json(.init(
            status: .notReady, checks: payload, error: "not ready: \(failing)", code: .notReady
        ))))
    }

    func getProducts(_ input: Operations.GetProducts.Input) async throws -> Operations.GetProducts.Output {
        let scope = try RequestScope.ofRequest()
        let demo = input.query.demo.flatMap { CatalogService.Demo(rawValue: $0.rawValue) }
        return .ok(.init(body: .json(try await catalog.catalog(userId: input.query.userId, demo: demo, scope: scope))))
    }

    func getCancelFlowConfig(_ input: Operations.GetCancelFlowConfig.Input) async throws -> Operations.GetCancelFlowConfig.Output {
        .ok(.init(body: .json(cancelFlowConfig)))
    }

    func acceptSaveOffer(_ input: Operations.AcceptSaveOffer.Input) async throws -> Operations.AcceptSaveOffer.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await service.acceptSaveOffer(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func submitCancelFlowResponse(
        _ input: Operations.SubmitCancelFlowResponse.Input
    ) async throws -> Operations.SubmitCancelFlowResponse.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(
            try await service.submitCancelFlowResponse(body, scope: scope, idempotencyKey: input.headers.idempotencyKey)
        )))
    }

    func pauseSubscription(_ input: Operations.PauseSubscription.Input) async throws -> Operations.PauseSubscription.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await service.pauseSubscription(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func resumeSubscription(_ input: Operations.ResumeSubscription.Input) async throws -> Operations.ResumeSubscription.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await service.resumeSubscription(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func cancelSubscription(_ input: Operations.CancelSubscription.Input) async throws -> Operations.CancelSubscription.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await service.cancelSubscription(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func reactivateSubscription(
        _ input: Operations.ReactivateSubscription.Input
    ) async throws -> Operations.ReactivateSubscription.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(
            try await service.reactivateSubscription(body, scope: scope, idempotencyKey: input.headers.idempotencyKey)
        )))
    }

    func createCustomerPortalSession(
        _ input: Operations.CreateCustomerPortalSession.Input
    ) async throws -> Operations.CreateCustomerPortalSession.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await portal.createSession(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func getEntitlements(_ input: Operations.GetEntitlements.Input) async throws -> Operations.GetEntitlements.Output {
        let scope = try RequestScope.ofRequest()
        let entitlements = try await service.entitlements(userId: input.query.userId, scope: scope)
        return .ok(.init(body: .json(.init(entitlements: try entitlements.map(WireMapping.entitlement), pendingClaims: []))))
    }

    func searchCustomers(_ input: Operations.SearchCustomers.Input) async throws -> Operations.SearchCustomers.Output {
        let scope = try RequestScope.ofRequest()
        let kind = input.query.kind.flatMap { CustomerRecord.Kind(rawValue: $0.rawValue) }
        let page = try await desk.search(query: input.query.query, kind: kind, page: input.query.page ?? 1, perPage: input.query.perPage ?? 20, scope: scope)
        return .ok(.init(body: .json(page)))
    }

    func getDeskSession(_ input: Operations.GetDeskSession.Input) async throws -> Operations.GetDeskSession.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(.init(
            _operator: scope.actor, mode: scope.isSandbox ? .test : .live, serverTime: service.clock.now(scope),
            newCustomers: try await desk.newCustomerFigures(scope: scope)
        ))))
    }

    func streamDeskEvents(_ input: Operations.StreamDeskEvents.Input) async throws -> Operations.StreamDeskEvents.Output {
        let scope = try RequestScope.ofRequest()
        var after: Int64?
        if let text = input.headers.lastEventID {
            guard text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int64(text) else {
                throw SaveDeskError.badRequest("Last-Event-ID must be the id of an event (digits), got \"\(RequestValidator.quote(text))\"", code: "invalid_request")
            }
            after = value
        }
        let subscription = try await events.subscribe(livemode: scope.livemode, customerId: input.query.customerId, after: after)
        return .ok(.init(body: .textEventStream(HTTPBody(EventStreamBody(subscription: subscription), length: .unknown, iterationBehavior: .single))))
    }

    func announceDeskPresence(_ input: Operations.AnnounceDeskPresence.Input) async throws -> Operations.AnnounceDeskPresence.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        let presence = try await events.announce(
            scope: scope, customerId: body.customerId, session: body.session, activity: body.activity.rawValue
        )
        return .ok(.init(body: .json(.init(
            customerId: presence.customerId, _operator: presence.operatorName, session: presence.session,
            activity: body.activity, expiresAt: Date(unixSeconds: presence.expiresAt)
        ))))
    }

    func createCustomer(_ input: Operations.CreateCustomer.Input) async throws -> Operations.CreateCustomer.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        let values = try CustomerService.checked(
            id: body.id, name: body.name, email: body.email, country: body.country, appAccountToken: body.appAccountToken,
            billingCustomerId: body.billingCustomerId, originalTransactionIds: body.appStoreOriginalTransactionIds
        )
        try await customers.create(values, scope: scope, idempotencyKey: input.headers.idempotencyKey, request: body)
        return .ok(.init(body: .json(try await desk.detail(customerId: values.id, scope: scope))))
    }

    func updateCustomer(_ input: Operations.UpdateCustomer.Input) async throws -> Operations.UpdateCustomer.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        let values = try CustomerService.checked(
            id: input.path.customerId, name: body.name, email: body.email, country: body.country, appAccountToken: body.appAccountToken,
            billingCustomerId: body.billingCustomerId, originalTransactionIds: body.appStoreOriginalTransactionIds
        )
        try await customers.update(values, scope: scope, idempotencyKey: input.headers.idempotencyKey, request: body)
        return .ok(.init(body: .json(try await desk.detail(customerId: values.id, scope: scope))))
    }

    func getCustomer(_ input: Operations.GetCustomer.Input) async throws -> Operations.GetCustomer.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await desk.detail(customerId: input.path.customerId, scope: scope))))
    }

    func getCustomerTimeline(_ input: Operations.GetCustomerTimeline.Input) async throws -> Operations.GetCustomerTimeline.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await desk.timeline(customerId: input.path.customerId, limit: input.query.limit ?? 100, scope: scope))))
    }

    func getUserOffer(_ input: Operations.GetUserOffer.Input) async throws -> Operations.GetUserOffer.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await switchAndSave.userOffer(userId: input.query.userId, scope: scope))))
    }

    func recordOfferDismissed(_ input: Operations.RecordOfferDismissed.Input) async throws -> Operations.RecordOfferDismissed.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await switchAndSave.recordDismissal(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func resetOfferDismissal(_ input: Operations.ResetOfferDismissal.Input) async throws -> Operations.ResetOfferDismissal.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(
            try await switchAndSave.resetDismissal(customerId: input.path.customerId, scope: scope, idempotencyKey: input.headers.idempotencyKey)
        )))
    }

    func getCancelFlowAnalytics(
        _ input: Operations.GetCancelFlowAnalytics.Input
    ) async throws -> Operations.GetCancelFlowAnalytics.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(
            try await analytics.cancelFlow(from: input.query.from, to: input.query.to, operatorName: input.query._operator, scope: scope)
        )))
    }

    func recordOfferViewed(_ input: Operations.RecordOfferViewed.Input) async throws -> Operations.RecordOfferViewed.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await switchAndSave.recordImpression(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func recordMigrationConverted(
        _ input: Operations.RecordMigrationConverted.Input
    ) async throws -> Operations.RecordMigrationConverted.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await switchAndSave.recordConversion(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func getSwitchAndSaveAnalytics(
        _ input: Operations.GetSwitchAndSaveAnalytics.Input
    ) async throws -> Operations.GetSwitchAndSaveAnalytics.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await analytics.switchAndSave(from: input.query.from, to: input.query.to, scope: scope))))
    }

    func advanceClock(_ input: Operations.AdvanceClock.Input) async throws -> Operations.AdvanceClock.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await testClock.advance(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func winBackCustomer(_ input: Operations.WinBackCustomer.Input) async throws -> Operations.WinBackCustomer.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(
            try await winBack.winBack(customerId: input.path.customerId, request: body, scope: scope, idempotencyKey: input.headers.idempotencyKey)
        )))
    }

    func recordAppStoreCancellation(
        _ input: Operations.RecordAppStoreCancellation.Input
    ) async throws -> Operations.RecordAppStoreCancellation.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await retention.recordAppStoreCancellation(
            customerId: input.path.customerId, request: body, scope: scope, idempotencyKey: input.headers.idempotencyKey
        ))))
    }

    func issueRetentionOfferCode(_ input: Operations.IssueRetentionOfferCode.Input) async throws -> Operations.IssueRetentionOfferCode.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await retention.issueOfferCode(
            customerId: input.path.customerId, request: body, scope: scope, idempotencyKey: input.headers.idempotencyKey
        ))))
    }

    func syncStoreKitTransaction(
        _ input: Operations.SyncStoreKitTransaction.Input
    ) async throws -> Operations.SyncStoreKitTransaction.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        let key = input.headers.idempotencyKey
        switch body {
        case .StoreKitTransactionRequest(let one):
            return .ok(.init(body: .json(.StoreKitTransactionResponse(try await appStore.sync(one, scope: scope, idempotencyKey: key)))))
        case .StoreKitReconcileRequest(let chunk):
            return .ok(.init(body: .json(.StoreKitReconcileResponse(try await appStore.reconcile(chunk, scope: scope, idempotencyKey: key)))))
        }
    }

    func claimEntitlement(_ input: Operations.ClaimEntitlement.Input) async throws -> Operations.ClaimEntitlement.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await appStore.claim(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func getTransactionHistory(_ input: Operations.GetTransactionHistory.Input) async throws -> Operations.GetTransactionHistory.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await checkout.history(userId: input.query.userId, scope: scope))))
    }

    func createCheckoutBatch(_ input: Operations.CreateCheckoutBatch.Input) async throws -> Operations.CreateCheckoutBatch.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await checkout.batch(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func getCheckoutConfig(_ input: Operations.GetCheckoutConfig.Input) async throws -> Operations.GetCheckoutConfig.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await checkout.checkoutConfig(id: input.path.transactionId, scope: scope))))
    }

    func finalizeCheckout(_ input: Operations.FinalizeCheckout.Input) async throws -> Operations.FinalizeCheckout.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await checkout.finalize(id: input.path.transactionId, scope: scope))))
    }

    func createCheckoutSession(_ input: Operations.CreateCheckoutSession.Input) async throws -> Operations.CreateCheckoutSession.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await checkout.session(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func recordFunnelEvent(_ input: Operations.RecordFunnelEvent.Input) async throws -> Operations.RecordFunnelEvent.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await service.recordFunnelEvent(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func getStoreKitSubscriptionStatus(
        _ input: Operations.GetStoreKitSubscriptionStatus.Input
    ) async throws -> Operations.GetStoreKitSubscriptionStatus.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await appStore.status(originalTransactionId: input.query.originalTransactionId, scope: scope))))
    }

    func receiveAppStoreNotification(
        _ input: Operations.ReceiveAppStoreNotification.Input
    ) async throws -> Operations.ReceiveAppStoreNotification.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await appStore.receive(body, scope: scope))))
    }

    func receiveStripeEvent(_ input: Operations.ReceiveStripeEvent.Input) async throws -> Operations.ReceiveStripeEvent.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        guard let stripeWebhooks else {
            throw SaveDeskError.unprocessable("this server does not keep billing on Stripe", code: "stripe_not_configured")
        }
        // The object is Stripe's: read as Stripe's own shape (the spec checked the envelope).
        let event: StripeEvent
        do {
            event = try JSONDecoder().decode(StripeEvent.self, from: JSONEncoder().encode(body))
        } catch {
            throw SaveDeskError.unprocessable("this Stripe event could not be read: \(error)", code: "stripe_event_unreadable")
        }
        return .ok(.init(body: .json(.init(status: try await stripeWebhooks.receive(event, scope: scope)))))
    }

    func answerRetentionMessage(_ input: Operations.AnswerRetentionMessage.Input) async throws -> Operations.AnswerRetentionMessage.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        guard let answer = try await retentionMessaging.answer(body, scope: scope).body else { return .noContent(.init()) }
        return .ok(.init(body: .json(answer)))
    }

    func simulateCancelPage(_ input: Operations.SimulateCancelPage.Input) async throws -> Operations.SimulateCancelPage.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await retentionMessaging.simulateCancelPage(body, scope: scope))))
    }

    func getRetentionMessageAnalytics(
        _ input: Operations.GetRetentionMessageAnalytics.Input
    ) async throws -> Operations.GetRetentionMessageAnalytics.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await analytics.retentionMessages(
            from: input.query.from, to: input.query.to, settings: retentionMessaging.settings, scope: scope
        ))))
    }

    func createCheckout(_ input: Operations.CreateCheckout.Input) async throws -> Operations.CreateCheckout.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await checkout.create(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func getTransaction(_ input: Operations.GetTransaction.Input) async throws -> Operations.GetTransaction.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await checkout.transaction(id: input.path.transactionId, scope: scope))))
    }

    func updateTransactionStoreKitStatus(
        _ input: Operations.UpdateTransactionStoreKitStatus.Input
    ) async throws -> Operations.UpdateTransactionStoreKitStatus.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await checkout.updateStoreKitStatus(id: input.path.transactionId, body, scope: scope))))
    }

    func simulateCheckout(_ input: Operations.SimulateCheckout.Input) async throws -> Operations.SimulateCheckout.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await checkout.complete(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func simulateAppStoreEvent(_ input: Operations.SimulateAppStoreEvent.Input) async throws -> Operations.SimulateAppStoreEvent.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await appStore.simulate(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func simulateStoreKitPurchase(_ input: Operations.SimulateStoreKitPurchase.Input) async throws -> Operations.SimulateStoreKitPurchase.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await appStore.simulatePurchase(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func getUpgradeOffer(_ input: Operations.GetUpgradeOffer.Input) async throws -> Operations.GetUpgradeOffer.Output {
        let scope = try RequestScope.ofRequest()
        return .ok(.init(body: .json(try await upgrades.offer(userId: input.query.userId, productId: input.query.productId, scope: scope))))
    }

    func executeUpgrade(_ input: Operations.ExecuteUpgrade.Input) async throws -> Operations.ExecuteUpgrade.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await upgrades.execute(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }

    func respondToUpgradeOffer(_ input: Operations.RespondToUpgradeOffer.Input) async throws -> Operations.RespondToUpgradeOffer.Output {
        let scope = try RequestScope.ofRequest()
        guard case .json(let body) = input.body else { throw SaveDeskError.badRequest("expected JSON") }
        return .ok(.init(body: .json(try await upgrades.respond(body, scope: scope, idempotencyKey: input.headers.idempotencyKey))))
    }
}
