import Foundation
import RetentionDomain

/// A web checkout kept by Stripe, in the SDK's deferred mode: the checkout is made in SaveDesk
/// (its price, trial and discount decided on the server's own facts, as on the ledger); finalize
/// makes, once, the Stripe customer (the customer's `billing_customer_id` reused when it has one)
/// and an incomplete Stripe subscription, and hands the SDK the client secret to confirm: the
/// first invoice's PaymentIntent, or, for a switch whose App Store period is still paid, the
/// SetupIntent that saves the card while `trial_end` (the bridged App Store end) keeps anything
/// from being charged. The payment is confirmed by Stripe's signed webhook, which makes the web
/// subscription here (`StripeWebhookService`).
extension StripeBilling {
    struct CheckoutStart: Sendable {
        var clientSecret: String
        var stripeCustomer: String
        var subscription: String
    }

    /// The expanded parts of a subscription just made.
    private struct Started: Decodable {
        struct Secret: Decodable { var client_secret: String? }
        struct Invoice: Decodable { var id: String; var confirmation_secret: Secret? }
        var id: String
        var status: String
        var latest_invoice: Invoice?
        var pending_setup_intent: Secret?
    }

    /// `remember` keeps a newly made Stripe customer on SaveDesk's customer at once, so a retry
    /// after a later failure reuses it rather than asking Stripe again.
    func startCheckout(
        _ record: CheckoutRecord, customer: CustomerRecord, product: ServerConfig.ProductConfig, scope: RequestScope,
        remember: (String) async throws -> Void
    ) async throws -> CheckoutStart {
        let (client, price) = try clientAndPrice(of: product, scope: scope)
        do {
            var stripeCustomer = customer.billingCustomerId
            if stripeCustomer == nil {
                var form = StripeClient.Form()
                if !customer.email.isEmpty { form.add("email", customer.email) }
                if !customer.name.isEmpty { form.add("name", customer.name) }
                form.add("metadata[savedesk_customer_id]", customer.id)
                let made: StripeCustomer = try await client.post(
                    "/v1/customers", form, idempotencyKey: "savedesk_customer_" + SHA256Digest.hex(Array("\(scope.livemode)|\(customer.id)".utf8), prefix: 16)
                )
                stripeCustomer = made.id
                try await remember(made.id)
            }
            guard let stripeCustomer else { throw StripeClient.Failure.unreachable("no customer") }
            var form = StripeClient.Form()
            form.add("customer", stripeCustomer)
            form.add("items[0][price]", price)
            form.add("payment_behavior", "default_incomplete")
            form.add("payment_settings[save_default_payment_method]", "on_subscription")
            if let trialEnd = record.trialEnd {
                form.add("trial_end", trialEnd)
                // A switch abandoned before its card was saved ends with its trial: never billed.
                form.add("trial_settings[end_behavior][missing_payment_method]", "cancel")
            }
            if record.discountPercent > 0 {
                // The switch-and-save discount runs for as long as the subscription does (as on the ledger).
                form.add("discounts[0][coupon]", try await Self.coupon(percent: record.discountPercent, duration: .forever, client: client))
            }
            Self.addMetadata(of: record, customer: customer, to: &form, under: "metadata")
            form.add("expand[0]", "latest_invoice.confirmation_secret")
            form.add("expand[1]", "pending_setup_intent")
            let started: Started = try await client.post("/v1/subscriptions", form, idempotencyKey: "savedesk_checkout_" + record.id)
            guard let secret = started.pending_setup_intent?.client_secret ?? started.latest_invoice?.confirmation_secret?.client_secret else {
                throw StripeClient.Failure.unreachable("the subscription came back with no client secret to confirm")
            }
            return CheckoutStart(clientSecret: secret, stripeCustomer: stripeCustomer, subscription: started.id)
        } catch let failure as StripeClient.Failure {
            throw Self.answer(failure)
        }
    }

    /// The metadata that links a Stripe subscription to SaveDesk's customer and checkout (what
    /// the webhook reads), under `key` ("metadata", or a Checkout Session's "subscription_data[metadata]").
    private static func addMetadata(of record: CheckoutRecord, customer: CustomerRecord, to form: inout StripeClient.Form, under key: String) {
        form.add("\(key)[savedesk_customer_id]", customer.id)
        form.add("\(key)[savedesk_checkout_id]", record.id)
        if let trial = record.trialType { form.add("\(key)[savedesk_trial_type]", trial) }
    }

    /// A browser checkout (the Safari flows) on Stripe: a Checkout Session in subscription mode,
    /// made once per SaveDesk checkout, with the same trial, discount and metadata; Stripe's page
    /// takes the payment and its webhook records the subscription. Answers the page's URL.
    func startCheckoutSession(
        _ record: CheckoutRecord, customer: CustomerRecord, product: ServerConfig.ProductConfig, base: String, scope: RequestScope
    ) async throws -> String {
        struct Session: Decodable { var id: String; var url: String? }
        let (client, price) = try clientAndPrice(of: product, scope: scope)
        do {
            var form = StripeClient.Form()
            form.add("mode", "subscription")
            if let stripeCustomer = customer.billingCustomerId {
                form.add("customer", stripeCustomer)
            } else if !customer.email.isEmpty {
                form.add("customer_email", customer.email)
            }
            form.add("client_reference_id", record.id)
            form.add("line_items[0][price]", price)
            form.add("line_items[0][quantity]", Int64(1))
            if let trialEnd = record.trialEnd { form.add("subscription_data[trial_end]", trialEnd) }
            if record.discountPercent > 0 {
                form.add("discounts[0][coupon]", try await Self.coupon(percent: record.discountPercent, duration: .forever, client: client))
            }
            Self.addMetadata(of: record, customer: customer, to: &form, under: "subscription_data[metadata]")
            form.add("success_url", "\(base)/checkout/callback?transaction_id=\(record.id)&product_id=\(record.productId)")
            form.add("cancel_url", "\(base)/checkout/\(record.id)")
            let session: Session = try await client.post("/v1/checkout/sessions", form, idempotencyKey: "savedesk_checkout_session_" + record.id)
            guard let url = session.url else { throw StripeClient.Failure.unreachable("the Checkout Session came back with no URL") }
            return url
        } catch let failure as StripeClient.Failure {
            throw Self.answer(failure)
        }
    }

    /// The mode's client and the Stripe price of `product` in that mode's account.
    private func clientAndPrice(of product: ServerConfig.ProductConfig, scope: RequestScope) throws -> (StripeClient, String) {
        let client = try client(livemode: scope.livemode)
        guard let price = client.account.prices[product.id] else {
            throw SaveDeskError.unprocessable("\(product.displayName) has no Stripe price in this mode's account", code: "stripe_not_configured")
        }
        return (client, price)
    }
}
