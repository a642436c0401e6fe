import Foundation
import RetentionDomain
import TOMLKit

/// Reads and validates a TOML config. Every problem is reported with its path, all at once;
/// a config with any problem is refused as a whole.
public enum ConfigReader {
    public static func load(file: String) throws(InvalidConfig) -> ServerConfig {
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
            throw InvalidConfig(file: file, issues: [ConfigIssue(path: "", message: "cannot read the file")])
        }
        return try parse(text, file: file)
    }

    public static func parse(_ text: String, file: String = "config") throws(InvalidConfig) -> ServerConfig {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let line = error.source.begin.line
            throw InvalidConfig(file: file, issues: [ConfigIssue(path: "line \(line)", message: "not valid TOML: \(error.description)")])
        } catch {
            throw InvalidConfig(file: file, issues: [ConfigIssue(path: "", message: "not valid TOML: \(error)")])
        }
        let issues = IssueCollector()
        let root = TOMLNode(table: table, path: "", issues: issues)
        root.allowOnly([
            "products", "cancel_flow", "switch_and_save", "api_keys", "billing", "win_back", "app_store", "server", "checkout", "rate_limits",
            "metrics", "events",
        ])
        let products = readProducts(root)
        let cancelFlow = readCancelFlow(root.table("cancel_flow", required: true), issues: issues)
        let campaign = root.table("switch_and_save").flatMap { readCampaign($0, products: products) }
        let keys = readKeys(root)
        var billing = readBilling(root.table("billing"))
        billing.stripe = root.table("billing").flatMap { readStripe($0, products: products, keys: keys) }
        let winBack = root.table("win_back").flatMap(readWinBack)
        let appStore = root.table("app_store").flatMap(readAppStore)
        let server = readServer(root.table("server"))
        let checkout = readCheckout(root.table("checkout"))
        var config: ServerConfig?
        if let cancelFlow {
            config = ServerConfig(
                products: products, cancelFlow: cancelFlow, campaign: campaign, apiKeys: keys, billing: billing, winBack: winBack,
                appStore: appStore, server: server, checkout: checkout
            )
            config?.rateLimits = readRateLimits(root.table("rate_limits"))
            config?.metrics = root.table("metrics").flatMap(readMetrics)
            config?.events = readEvents(root.table("events"))
            for issue in config?.deploymentIssues(testClock: false) ?? [] { issues.add(issue.path, issue.message) }
            if let retention = appStore?.retentionMessaging { checkRetentionMessaging(retention, products: products, issues: issues) }
            let shared = Set(winBack?.offerCodes ?? []).intersection(cancelFlow.appStoreOffer?.offerCodes ?? [])
            for code in shared.sorted() {
                issues.add("cancel_flow.app_store_offer.offer_codes", "offer code \"\(code)\" is also a win-back code; a code belongs to one pool")
            }
        }
        guard issues.issues.isEmpty, let config else {
            throw InvalidConfig(file: file, issues: issues.issues)
        }
        return config
    }

    // MARK: Products

    static func readProducts(_ root: TOMLNode) -> [ServerConfig.ProductConfig] {
        let nodes = root.tables("products")
        if nodes.isEmpty { root.issues.add("products", "at least one product is needed") }
        var seen = Set<String>()
        return nodes.compactMap { node in
            node.allowOnly([
                "id", "display_name", "description", "interval", "tier", "currency", "web_price", "app_store_price",
                "storekit_product_id", "subscription_group_id",
            ])
            let id = node.string("id")
            if let id, !seen.insert(id).inserted { node.issues.add(node.child("id"), "duplicate product id \"\(id)\"") }
            let name = node.string("display_name")
            let intervalText = node.string("interval") ?? "month"
            let interval = BillingInterval(wireValue: intervalText)
            if !interval.isKnown { node.issues.add(node.child("interval"), "must be week, month or year, got \"\(intervalText)\"") }
            let currency = (node.string("currency", required: false) ?? "USD").uppercased()
            if currency.count != 3 || !currency.allSatisfy(\.isLetter) {
                node.issues.add(node.child("currency"), "must be a three-letter currency code, got \"\(currency)\"")
            }
            let web = node.price("web_price", currency: currency)
            let appStore = node.price("app_store_price", currency: currency)
            if !node.has("web_price") && !node.has("app_store_price") {
                node.issues.add(node.path, "needs a web_price, an app_store_price or both")
            }
            let tier = node.int("tier", required: false, in: 0...100) ?? 1
            guard let id, let name else { return nil }
            return ServerConfig.ProductConfig(
                id: id, displayName: name, description: node.string("description", required: false) ?? "",
                interval: interval, tier: tier, webPrice: web, appStorePrice: appStore,
                storekitProductId: node.string("storekit_product_id", required: false),
                subscriptionGroupId: node.int("subscription_group_id", required: false, in: 1...Int(Int32.max))
            )
        }
    }

    // MARK: Cancel flow

    static func readCancelFlow(_ node: TOMLNode?, issues: IssueCollector) -> ServerConfig.CancelFlowSettings? {
        guard let node else { return nil }
        node.allowOnly(["enabled", "variant_id", "questions", "offer", "pause", "max_pause_days", "app_store_offer"])
        let offerNode = node.table("offer")
        let (offer, terms) = offerNode.map(readOffer) ?? (nil, nil)
        let pauseNode = node.table("pause")
        let maxPause = node.int("max_pause_days", required: false, in: 1...730) ?? 365
        let (pause, defaultPause) = pauseNode.map { readPause($0, maxDays: maxPause) } ?? (nil, nil)
        var questionIds = Set<Int>()
        let questions = node.tables("questions").enumerated().compactMap { index, question in
            readQuestion(question, index: index, seen: &questionIds, offerEnabled: offer?.enabled == true,
                         pauseEnabled: pause?.enabled == true)
        }
        let config = CancelFlow.Config(
            enabled: node.bool("enabled", default: true), questions: questions, offer: offer, pause: pause,
            variantId: node.int("variant_id", required: false, in: 0...Int(Int32.max))
        )
        return ServerConfig.CancelFlowSettings(
            config: config, offerTerms: terms, defaultPauseOptionId: defaultPause, maxPauseDays: maxPause,
            appStoreOffer: node.table("app_store_offer").flatMap(readAppStoreOffer)
        )
    }

    static func readAppStoreOffer(_ node: TOMLNode) -> ServerConfig.AppStoreOfferSettings? {
        node.allowOnly(["title", "body", "cta_text", "offer_codes"])
        let codes = readOfferCodes(node)
        if codes.isEmpty { node.issues.add(node.child("offer_codes"), "list at least one App Store offer code") }
        let (title, body, cta) = (node.string("title"), node.string("body"), node.string("cta_text"))
        guard let title, let body, let cta else { return nil }
        return .init(title: title, body: body, ctaText: cta, offerCodes: codes)
    }

    /// `offer_codes`: each 1–64 letters, digits, - or _, no duplicates.
    static func readOfferCodes(_ node: TOMLNode) -> [String] {
        let codes = node.strings("offer_codes")
        var seen = Set<String>()
        for (index, code) in codes.enumerated() {
            if code.isEmpty || code.count > 64 || !code.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) {
                node.issues.add("\(node.child("offer_codes"))[\(index)]", "an offer code is 1–64 letters, digits, - or _, got \"\(code)\"")
            } else if !seen.insert(code).inserted {
                node.issues.add("\(node.child("offer_codes"))[\(index)]", "duplicate offer code \"\(code)\"")
            }
        }
        return codes
    }

    static func readQuestion(
        _ node: TOMLNode, index: Int, seen: inout Set<Int>, offerEnabled: Bool, pauseEnabled: Bool
    ) -> CancelFlow.Question? {
        node.allowOnly(["id", "order", "text", "type", "required", "options"])
        let id = node.int("id", in: 1...Int(Int32.max))
        if let id, !seen.insert(id).inserted { node.issues.add(node.child("id"), "duplicate question id \(id)") }
        let text = node.string("text")
        let typeText = node.string("type") ?? "single_select"
        let type = CancelFlow.QuestionType(wireValue: typeText)
        if !type.isKnown { node.issues.add(node.child("type"), "must be single_select or free_text, got \"\(typeText)\"") }
        var optionIds = Set<Int>()
        let options = node.tables("options").enumerated().compactMap { optionIndex, option -> CancelFlow.Option? in
            option.allowOnly(["id", "order", "label", "triggers_offer", "triggers_pause"])
            let optionId = option.int("id", in: 1...Int(Int32.max))
            if let optionId, !optionIds.insert(optionId).inserted {
                option.issues.add(option.child("id"), "duplicate option id \(optionId)")
            }
            let label = option.string("label")
            let offer = option.bool("triggers_offer", default: false)
            let pause = option.bool("triggers_pause", default: false)
            if offer && pause {
                option.issues.add(option.path, "triggers both offer and pause")
            } else if offer && !offerEnabled {
                option.issues.add(option.path, "triggers the offer, but no offer is enabled")
            } else if pause && !pauseEnabled {
                option.issues.add(option.path, "triggers the pause, but pause is not enabled")
            }
            guard let optionId, let label else { return nil }
            return CancelFlow.Option(
                id: optionId, order: option.int("order", required: false) ?? optionIndex, label: label,
                triggersOffer: offer, triggersPause: pause
            )
        }
        if type == .singleSelect, options.isEmpty, !node.has("options") {
            node.issues.add(node.child("options"), "a single_select question needs at least one option")
        }
        if type == .freeText, node.has("options") {
            node.issues.add(node.child("options"), "a free_text question has no options")
        }
        guard let id, let text else { return nil }
        return CancelFlow.Question(
            id: id, order: node.int("order", required: false) ?? index, questionText: text, questionType: type,
            isRequired: node.bool("required", default: false), options: options
        )
    }

    static func readOffer(_ node: TOMLNode) -> (CancelFlow.Offer?, SaveOfferTerms?) {
        node.allowOnly([
            "enabled", "title", "body", "cta_text", "type", "value", "duration", "duration_in_months", "free_period_unit",
        ])
        let typeText = node.string("type") ?? "discount"
        let type = CancelFlow.OfferType(wireValue: typeText)
        if !type.isKnown {
            node.issues.add(node.child("type"), "must be discount, free_trial or free_extension, got \"\(typeText)\"")
        }
        let value: String? = {
            if let number = node.table["value"]?.int { return String(number) }
            return node.string("value")
        }()
        let durationText = node.string("duration", required: false) ?? "once"
        var duration: CouponDuration = .once
        switch durationText {
        case "once": duration = .once
        case "forever": duration = .forever
        case "repeating":
            duration = .repeating(months: node.int("duration_in_months", in: 1...36) ?? 1)
        default:
            node.issues.add(node.child("duration"), "must be once, repeating or forever, got \"\(durationText)\"")
        }
        let unitText = node.string("free_period_unit", required: false) ?? "months"
        let unit = SaveOfferTerms.FreePeriodUnit(rawValue: unitText)
        if unit == nil { node.issues.add(node.child("free_period_unit"), "must be days or months, got \"\(unitText)\"") }
        let title = node.string("title"), body = node.string("body"), cta = node.string("cta_text")
        guard let value, let title, let body, let cta, type.isKnown else { return (nil, nil) }
        let offer = CancelFlow.Offer(
            enabled: node.bool("enabled", default: true), title: title, body: body, ctaText: cta, type: type, value: value
        )
        do {
            let terms = try SaveOfferTerms(offer: offer, couponDuration: duration, freePeriodUnit: unit ?? .months)
            return (offer, terms)
        } catch {
            node.issues.add(node.child("value"), error.description)
            return (offer, nil)
        }
    }

    static func readPause(_ node: TOMLNode, maxDays: Int) -> (CancelFlow.PauseConfig?, Int?) {
        node.allowOnly(["enabled", "title", "body", "cta_text", "options", "default_option"])
        var ids = Set<Int>()
        let options = node.tables("options").enumerated().compactMap { index, option -> CancelFlow.PauseOption? in
            option.allowOnly(["id", "order", "label", "days", "resume_date"])
            let id = option.int("id", in: 1...Int(Int32.max))
            if let id, !ids.insert(id).inserted { option.issues.add(option.child("id"), "duplicate pause option id \(id)") }
            let label = option.string("label")
            let days = option.int("days", required: false, in: 1...maxDays)
            let resume = option.has("resume_date") ? option.date("resume_date") : nil
            if option.has("days") == option.has("resume_date") {
                option.issues.add(option.path, "needs exactly one of days or resume_date")
            }
            guard let id, let label else { return nil }
            return CancelFlow.PauseOption(
                id: id, order: option.int("order", required: false) ?? index, label: label,
                durationType: resume != nil ? .fixedDate : .days, durationDays: days, resumeDate: resume
            )
        }
        let enabled = node.bool("enabled", default: true)
        if enabled && options.isEmpty && !node.has("options") {
            node.issues.add(node.child("options"), "an enabled pause needs at least one option")
        }
        let defaultOption = node.int("default_option", required: false)
        if let defaultOption, !options.contains(where: { $0.id == defaultOption }) {
            node.issues.add(node.child("default_option"), "there is no pause option \(defaultOption)")
        }
        guard let title = node.string("title"), let body = node.string("body"), let cta = node.string("cta_text") else {
            return (nil, nil)
        }
        let pause = CancelFlow.PauseConfig(enabled: enabled, title: title, body: body, ctaText: cta, options: options)
        return (pause, defaultOption ?? pause.orderedOptions.first?.id)
    }

    // MARK: Switch and save

    static func readCampaign(_ node: TOMLNode, products: [ServerConfig.ProductConfig]) -> MigrationCampaign? {
        node.allowOnly([
            "should_show", "eligible_product_ids", "discount_percent", "min_subscription_days", "max_subscription_days",
            "free_trial_days", "title", "message", "cta_text", "rollout_percent", "per_product_prompts",
            "allowed_jurisdictions",
        ])
        let known = Set(products.map(\.id))
        let eligible = node.strings("eligible_product_ids")
        for (index, id) in eligible.enumerated() where !known.contains(id) {
            node.issues.add("\(node.child("eligible_product_ids"))[\(index)]", "no product \"\(id)\" in products")
        }
        let discount = node.int("discount_percent", in: 1...100)
        let minDays = node.int("min_subscription_days", required: false, in: 0...3650) ?? 0
        let maxDays = node.int("max_subscription_days", required: false, in: 0...3650)
        if let maxDays, maxDays < minDays {
            node.issues.add(node.child("max_subscription_days"), "must not be below min_subscription_days (\(minDays))")
        }
        var prompts: [String: MigrationCampaign.ProductPrompt] = [:]
        if let promptTable = node.table("per_product_prompts") {
            for key in promptTable.table.keys.sorted() {
                guard let prompt = promptTable.table(key, required: true) else { continue }
                prompt.allowOnly(["discount_percent", "title", "message", "cta_text"])
                if !known.contains(key) { prompt.issues.add(prompt.path, "no product \"\(key)\" in products") }
                if let percent = prompt.int("discount_percent", in: 1...100), let title = prompt.string("title"),
                    let message = prompt.string("message")
                {
                    prompts[key] = .init(discountPercent: percent, title: title, message: message,
                                         ctaText: prompt.string("cta_text", required: false))
                }
            }
        }
        let jurisdictions = node.strings("allowed_jurisdictions").map { $0.uppercased() }
        for (index, code) in jurisdictions.enumerated() where code.count != 2 || !code.allSatisfy(\.isLetter) {
            node.issues.add("\(node.child("allowed_jurisdictions"))[\(index)]", "expected a two-letter country code, got \"\(code)\"")
        }
        guard let discount, let title = node.string("title"), let message = node.string("message") else { return nil }
        return MigrationCampaign(
            shouldShow: node.bool("should_show", default: true), eligibleProductIds: eligible, discountPercent: discount,
            minSubscriptionDays: minDays, maxSubscriptionDays: maxDays,
            freeTrialDays: node.int("free_trial_days", required: false, in: 0...730) ?? 0, title: title,
            message: message, ctaText: node.string("cta_text", required: false),
            rolloutPercent: node.int("rollout_percent", required: false, in: 0...100),
            perProductPrompts: prompts.isEmpty ? nil : prompts,
            allowedJurisdictions: jurisdictions.isEmpty ? nil : jurisdictions
        )
    }

    // MARK: Keys and billing

    static func readKeys(_ root: TOMLNode) -> [APIKey] {
        let nodes = root.tables("api_keys")
        if nodes.isEmpty { root.issues.add("api_keys", "at least one key is needed") }
        var seen = Set<String>()
        return nodes.compactMap { node in
            node.allowOnly(["key", "operator"])
            guard let text = node.string("key") else { return nil }
            let operatorName = node.string("operator", required: false)
            guard let key = APIKey(key: text, operatorName: operatorName) else {
                node.issues.add(node.child("key"), "must start with pk_test_, pk_live_, zs_pk_test_, zs_pk_live_, sk_test_ or sk_live_")
                return nil
            }
            if text.count < 16 { node.issues.add(node.child("key"), "is too short (at least 16 characters)") }
            if !seen.insert(text).inserted { node.issues.add(node.child("key"), "duplicate key") }
            if key.kind == .secret, operatorName == nil {
                node.issues.add(node.child("operator"), "a secret key needs the operator name it acts as")
            }
            if key.kind == .publishable, operatorName != nil {
                node.issues.add(node.child("operator"), "publishable keys act as the app, not an operator")
            }
            return key
        }
    }

    static func readWinBack(_ node: TOMLNode) -> ServerConfig.WinBackSettings? {
        node.allowOnly(["discount_percent", "duration_in_months", "offer_codes"])
        let codes = readOfferCodes(node)
        guard let percent = node.int("discount_percent", in: 1...100),
            let months = node.int("duration_in_months", in: 1...36)
        else { return nil }
        return .init(discountPercent: percent, durationInMonths: months, offerCodes: codes)
    }

    static func readAppStore(_ node: TOMLNode) -> ServerConfig.AppStoreSettings? {
        node.allowOnly(["bundle_id", "environment", "local_ca", "trusted_roots", "retention_messaging"])
        let environment = node.string("environment", required: false) ?? "Sandbox"
        if !["Sandbox", "Production", "Xcode"].contains(environment) {
            node.issues.add(node.child("environment"), "must be Sandbox, Production or Xcode, got \"\(environment)\"")
        }
        let localCA = node.bool("local_ca", default: false)
        let roots = node.strings("trusted_roots")
        for (index, path) in roots.enumerated() where !FileManager.default.fileExists(atPath: path) {
            node.issues.add("\(node.child("trusted_roots"))[\(index)]", "no file at \(path)")
        }
        if !localCA && roots.isEmpty {
            node.issues.add(node.path, "trust at least one root: list trusted_roots, or set local_ca = true for a test server")
        }
        if localCA && environment == "Production" {
            node.issues.add(node.child("local_ca"), "a local CA is for Sandbox and Xcode testing, not Production")
        }
        let retention = node.table("retention_messaging").flatMap { readRetentionMessaging($0, localCA: localCA) }
        guard let bundle = node.string("bundle_id") else { return nil }
        return .init(bundleId: bundle, environment: environment, localCA: localCA, trustedRoots: roots, retentionMessaging: retention)
    }

    /// `[app_store.retention_messaging]`: approved messages (Apple's identifier per locale), rules
    /// in order, the default message, the holdout, and the key that signs promotional offers.
    static func readRetentionMessaging(_ node: TOMLNode, localCA: Bool) -> ServerConfig.RetentionMessagingSettings? {
        node.allowOnly([
            "app_apple_id", "holdout_percent", "fallback_locale", "default_message", "max_age_seconds", "deadline_ms",
            "signing_key_file", "signing_key_id", "issuer_id", "messages", "rules",
        ])
        var messageIds = Set<String>()
        let messages = node.tables("messages").compactMap { message -> RetentionMessaging.Message? in
            message.allowOnly(["id", "text", "identifiers"])
            var identifiers: [String: String] = [:]
            if let table = message.table("identifiers", required: true) {
                for locale in table.table.keys.sorted() {
                    guard let value = table.string(locale) else { continue }
                    if UUID(uuidString: value) == nil {
                        node.issues.add(table.child(locale), "an approved message identifier is a UUID, got \"\(value)\"")
                    }
                    if locale.isEmpty || locale.count > 16 || !locale.allSatisfy({ $0.isLetter || $0 == "-" || $0 == "_" }) {
                        node.issues.add(table.child(locale), "not a locale such as en-US")
                    }
                    identifiers[locale] = value.lowercased()
                }
                if identifiers.isEmpty { node.issues.add(table.path, "list Apple's identifier for at least one locale") }
            }
            guard let id = message.string("id"), let text = message.string("text") else { return nil }
            if !messageIds.insert(id).inserted { node.issues.add(message.child("id"), "duplicate message id \"\(id)\"") }
            return RetentionMessaging.Message(id: id, text: text, identifiers: identifiers)
        }
        var ruleNames = Set<String>()
        let rules = node.tables("rules").compactMap { rule -> RetentionMessaging.Rule? in
            rule.allowOnly([
                "name", "message", "answer", "offer_identifier", "alternate_product_id", "billing_plan_type", "product_ids",
                "min_tenure_days", "max_tenure_days", "offer_unused", "reason_option_ids", "min_cancel_flows",
            ])
            let answer = rule.string("answer", required: false) ?? "message"
            var offer = RetentionMessaging.Offer.none
            switch answer {
            case "message": break
            case "promotional_offer":
                if let id = rule.string("offer_identifier") { offer = .promotionalOffer(offerIdentifier: id) }
            case "alternate_product":
                if let id = rule.string("alternate_product_id") {
                    offer = .alternateProduct(productId: id, billingPlanType: rule.string("billing_plan_type", required: false))
                }
            default: rule.issues.add(rule.child("answer"), "must be message, alternate_product or promotional_offer, got \"\(answer)\"")
            }
            let conditions = RetentionMessaging.Conditions(
                productIds: rule.strings("product_ids"), minTenureDays: rule.int("min_tenure_days", required: false, in: 0...36_500),
                maxTenureDays: rule.int("max_tenure_days", required: false, in: 0...36_500), offerUnused: rule.bool("offer_unused", default: false),
                reasonOptionIds: rule.ints("reason_option_ids"), minCancelFlows: rule.int("min_cancel_flows", required: false, in: 0...1_000)
            )
            guard let name = rule.string("name"), let message = rule.string("message") else { return nil }
            if !ruleNames.insert(name).inserted { rule.issues.add(rule.child("name"), "duplicate rule name \"\(name)\"") }
            if !messageIds.contains(message) { rule.issues.add(rule.child("message"), "no message \"\(message)\" in messages") }
            return RetentionMessaging.Rule(name: name, messageId: message, offer: offer, conditions: conditions)
        }
        let defaultMessage = node.string("default_message", required: false)
        if let defaultMessage, !messageIds.contains(defaultMessage) {
            node.issues.add(node.child("default_message"), "no message \"\(defaultMessage)\" in messages")
        }
        let keyFile = node.string("signing_key_file", required: false)
        let signs = rules.contains { if case .promotionalOffer = $0.offer { true } else { false } }
        if signs, keyFile == nil, !localCA {
            node.issues.add(node.child("signing_key_file"), "a promotional offer is signed with the In-App Purchase key: name its .p8 file")
        }
        if let keyFile {
            var status = stat()
            if stat(keyFile, &status) != 0 {
                node.issues.add(node.child("signing_key_file"), "no file at \(keyFile)")
            } else if status.st_mode & 0o077 != 0 {
                node.issues.add(node.child("signing_key_file"), "\(keyFile) is readable by others; the key must be the server's alone (chmod 600)")
            }
        }
        guard let appAppleId = node.int("app_apple_id", in: 1...Int(Int64.max)) else { return nil }
        let decision = RetentionMessaging.Settings(
            messages: messages, rules: rules, defaultMessageId: defaultMessage,
            fallbackLocale: node.string("fallback_locale", required: false) ?? "en-US",
            holdoutPercent: node.int("holdout_percent", required: false, in: 0...50) ?? 0
        )
        return ServerConfig.RetentionMessagingSettings(
            appAppleId: Int64(appAppleId), decision: decision,
            maxAgeSeconds: node.int("max_age_seconds", required: false, in: 5...3_600) ?? 300,
            deadlineMilliseconds: node.int("deadline_ms", required: false, in: 10...600) ?? 300,
            signingKeyFile: keyFile, signingKeyId: node.string("signing_key_id", required: signs) ?? "",
            issuerId: node.string("issuer_id", required: signs) ?? ""
        )
    }

    /// Rules name catalog products; an alternate product is an App Store product of the same
    /// subscription group as every product the rule applies to.
    static func checkRetentionMessaging(_ settings: ServerConfig.RetentionMessagingSettings, products: [ServerConfig.ProductConfig], issues: IssueCollector) {
        let base = "app_store.retention_messaging.rules"
        for (index, rule) in settings.decision.rules.enumerated() {
            for id in rule.conditions.productIds where !products.contains(where: { $0.id == id }) {
                issues.add("\(base)[\(index)].product_ids", "no product \"\(id)\" in the catalog")
            }
            guard case .alternateProduct(let storeId, _) = rule.offer else { continue }
            guard let alternate = products.first(where: { $0.storekitProductId == storeId }) else {
                issues.add("\(base)[\(index)].alternate_product_id", "no catalog product has the App Store id \"\(storeId)\"")
                continue
            }
            let from = rule.conditions.productIds.isEmpty ? products.filter { $0.storekitProductId != nil } : products.filter { rule.conditions.productIds.contains($0.id) }
            for product in from where product.subscriptionGroupId != alternate.subscriptionGroupId || alternate.subscriptionGroupId == nil {
                issues.add("\(base)[\(index)].alternate_product_id", "\(storeId) is not in the subscription group of \(product.id)")
            }
        }
    }

    static func readServer(_ node: TOMLNode?) -> ServerConfig.ServerSettings {
        guard let node else { return ServerConfig.ServerSettings() }
        node.allowOnly(["public_base_url", "read_timeout_seconds", "return_url_schemes", "drain_delay_seconds", "shutdown_timeout_seconds"])
        let base = node.string("public_base_url", required: false)
        if let base {
            let url = URL(string: base)
            if url?.scheme != "https" && url?.scheme != "http" || url?.host == nil || base.hasSuffix("/") {
                node.issues.add(node.child("public_base_url"), "must be an absolute http(s) URL without a trailing slash, got \"\(base)\"")
            }
        }
        let schemes = node.strings("return_url_schemes").map { $0.lowercased() }
        for (index, scheme) in schemes.enumerated() {
            let valid = scheme.first?.isLetter == true && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
            if !valid || ["http", "javascript", "data", "file", "vbscript"].contains(scheme) {
                node.issues.add("\(node.child("return_url_schemes"))[\(index)]", "not an app scheme: \"\(scheme)\"")
            }
        }
        return ServerConfig.ServerSettings(
            publicBaseURL: base, readTimeoutSeconds: node.int("read_timeout_seconds", required: false, in: 1...300) ?? 10,
            returnURLSchemes: schemes,
            drainDelaySeconds: node.int("drain_delay_seconds", required: false, in: 0...300) ?? 0,
            shutdownTimeoutSeconds: node.int("shutdown_timeout_seconds", required: false, in: 1...600) ?? 30
        )
    }

    /// `[events]`: the event stream's retention, heartbeat and bounds.
    static func readEvents(_ node: TOMLNode?) -> ServerConfig.EventSettings {
        let defaults = ServerConfig.EventSettings()
        guard let node else { return defaults }
        node.allowOnly(["retention_hours", "heartbeat_seconds", "max_subscribers", "subscriber_queue"])
        return ServerConfig.EventSettings(
            retentionHours: node.int("retention_hours", required: false, in: 1...8_760) ?? defaults.retentionHours,
            heartbeatSeconds: node.int("heartbeat_seconds", required: false, in: 1...300) ?? defaults.heartbeatSeconds,
            maxSubscribers: node.int("max_subscribers", required: false, in: 1...100_000) ?? defaults.maxSubscribers,
            subscriberQueue: node.int("subscriber_queue", required: false, in: 16...100_000) ?? defaults.subscriberQueue
        )
    }

    /// `[metrics]`: `listen = "HOST:PORT"`, the metrics listener's address (port 0: any free one).
    static func readMetrics(_ node: TOMLNode) -> ServerConfig.MetricsSettings? {
        node.allowOnly(["listen"])
        guard let listen = node.string("listen") else { return nil }
        guard let settings = metricsAddress(listen) else {
            node.issues.add(node.child("listen"), "must be HOST:PORT with a port from 0 to 65535 (0: any free port), got \"\(listen)\"")
            return nil
        }
        return settings
    }

    /// `HOST:PORT` (`[::1]:9464` for an IPv6 address) as metrics settings; nil when it is not one.
    public static func metricsAddress(_ text: String) -> ServerConfig.MetricsSettings? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || ".:-".contains($0) }) else { return nil }
        return ServerConfig.MetricsSettings(host: host, port: port)
    }

    /// `[rate_limits]`: `enabled`, `client_address_header`, and per address and per publishable
    /// key (`address_…`, `key_…`): `requests_per_second`, `burst_requests`, `bytes_per_second`,
    /// `burst_bytes`. A burst of bytes must hold the largest body a call accepts.
    static func readRateLimits(_ node: TOMLNode?) -> ServerConfig.RateLimitSettings {
        let defaults = ServerConfig.RateLimitSettings()
        guard let node else { return defaults }
        let fields = ["requests_per_second", "burst_requests", "bytes_per_second", "burst_bytes"]
        let perAddress: [String] = fields.map { "address_" + $0 }
        let perKey: [String] = fields.map { "key_" + $0 }
        let newCustomers = [
            "key_new_customers_per_second", "key_new_customers_burst", "address_new_customers_per_second", "address_new_customers_burst",
            "key_new_customers_per_day",
        ]
        node.allowOnly(Set(["enabled", "client_address_header"] + perAddress + perKey + newCustomers))
        func budget(_ prefix: String, _ fallback: ServerConfig.RateLimitSettings.Budget) -> ServerConfig.RateLimitSettings.Budget {
            func value(_ name: String, _ current: Double) -> Double {
                node.double(prefix + name, in: 0.001...1e12) ?? current
            }
            let budget = ServerConfig.RateLimitSettings.Budget(
                requestsPerSecond: value("requests_per_second", fallback.requestsPerSecond),
                burstRequests: value("burst_requests", fallback.burstRequests),
                bytesPerSecond: value("bytes_per_second", fallback.bytesPerSecond), burstBytes: value("burst_bytes", fallback.burstBytes)
            )
            if budget.burstRequests < 1 { node.issues.add(node.child(prefix + "burst_requests"), "must be at least 1") }
            if budget.burstBytes < Double(largestBody) {
                node.issues.add(node.child(prefix + "burst_bytes"), "must hold the largest body a call accepts (\(largestBody) bytes)")
            }
            return budget
        }
        let header = node.string("client_address_header", required: false)
        if let header, header.isEmpty || !header.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) {
            node.issues.add(node.child("client_address_header"), "must be a header name such as X-Forwarded-For, got \"\(header)\"")
        }
        var settings = ServerConfig.RateLimitSettings(
            enabled: node.bool("enabled", default: true), perAddress: budget("address_", defaults.perAddress),
            perKey: budget("key_", defaults.perKey), clientAddressHeader: header
        )
        let fallback = defaults.newCustomers
        settings.newCustomers = .init(
            perKeyPerSecond: node.double("key_new_customers_per_second", in: 0.001...1e9) ?? fallback.perKeyPerSecond,
            perKeyBurst: node.double("key_new_customers_burst", in: 1...1e9) ?? fallback.perKeyBurst,
            perAddressPerSecond: node.double("address_new_customers_per_second", in: 0.001...1e9) ?? fallback.perAddressPerSecond,
            perAddressBurst: node.double("address_new_customers_burst", in: 1...1e9) ?? fallback.perAddressBurst,
            perKeyPerDay: node.int("key_new_customers_per_day", required: false, in: 1...1_000_000_000) ?? fallback.perKeyPerDay
        )
        return settings
    }

    /// The largest request body any call accepts (`x-savedesk-body-limit` in openapi.yaml).
    static var largestBody: Int { (try? APISpec.shipped.get())?.operations.values.map(\.bodyLimit).max() ?? 6 << 20 }

    static func readCheckout(_ node: TOMLNode?) -> ServerConfig.CheckoutSettings {
        guard let node else { return ServerConfig.CheckoutSettings() }
        node.allowOnly(["app_id", "publishable_key", "merchant_country", "sheet_type"])
        let defaults = ServerConfig.CheckoutSettings()
        let country = (node.string("merchant_country", required: false) ?? defaults.merchantCountry).uppercased()
        if country.count != 2 || !country.allSatisfy(\.isLetter) {
            node.issues.add(node.child("merchant_country"), "expected a two-letter country code, got \"\(country)\"")
        }
        let sheet = node.string("sheet_type", required: false) ?? defaults.sheetType
        if !["webview", "safari_vc", "safari", "native_pay"].contains(sheet) {
            node.issues.add(node.child("sheet_type"), "must be webview, safari_vc, safari or native_pay, got \"\(sheet)\"")
        }
        return ServerConfig.CheckoutSettings(
            appId: node.int("app_id", required: false, in: 1...Int(Int32.max)) ?? defaults.appId,
            publishableKey: node.string("publishable_key", required: false) ?? defaults.publishableKey,
            merchantCountry: country, sheetType: sheet
        )
    }

    static func readBilling(_ node: TOMLNode?) -> ServerConfig.BillingSettings {
        node?.allowOnly(["retry_window_days", "billing_retry_grants_access", "portal_session_minutes", "provider", "stripe"])
        return ServerConfig.BillingSettings(
            retryWindowDays: node?.int("retry_window_days", required: false, in: 1...60) ?? 14,
            lifecyclePolicy: Lifecycle.Policy(
                billingRetryGrantsAccess: node?.bool("billing_retry_grants_access", default: true) ?? true
            ),
            portalSessionMinutes: node?.int("portal_session_minutes", required: false, in: 1...1440) ?? 30
        )
    }

    // MARK: Stripe

    /// `provider = "stripe"` and `[billing.stripe]`: an account for each mode the API keys serve,
    /// its secret key's prefix matching that mode, and a price for every product sold on the web.
    static func readStripe(_ billing: TOMLNode, products: [ServerConfig.ProductConfig], keys: [APIKey]) -> StripeSettings? {
        let provider = billing.string("provider", required: false) ?? "ledger"
        guard provider == "stripe" else {
            if provider != "ledger" { billing.issues.add(billing.child("provider"), "must be ledger or stripe, got \"\(provider)\"") }
            if billing.has("stripe") { billing.issues.add(billing.child("stripe"), "is read only with provider = \"stripe\"") }
            return nil
        }
        guard let node = billing.table("stripe", required: true) else { return nil }
        node.allowOnly(["api_base", "timeout_seconds", "max_retries", "webhook_tolerance_seconds", "pause_behavior", "test", "live"])
        let apiBase = node.string("api_base", required: false) ?? "https://api.stripe.com"
        if let url = URL(string: apiBase), let host = url.host {
            let loopback = ["127.0.0.1", "localhost", "::1"].contains(host)
            if url.scheme != "https", !(url.scheme == "http" && loopback) {
                node.issues.add(node.child("api_base"), "must be https (plain http only on loopback, for a local double)")
            }
        } else {
            node.issues.add(node.child("api_base"), "not a URL: \"\(apiBase)\"")
        }
        var settings = StripeSettings(
            apiBase: apiBase, timeoutSeconds: node.int("timeout_seconds", required: false, in: 1...120) ?? 20,
            maxRetries: node.int("max_retries", required: false, in: 0...10) ?? 2,
            webhookToleranceSeconds: node.int("webhook_tolerance_seconds", required: false, in: 10...3600) ?? 300
        )
        settings.pauseBehavior = node.string("pause_behavior", required: false) ?? "void"
        if !["void", "keep_as_draft", "mark_uncollectible"].contains(settings.pauseBehavior) {
            node.issues.add(node.child("pause_behavior"), "must be void, keep_as_draft or mark_uncollectible, got \"\(settings.pauseBehavior)\"")
        }
        let served = Set(keys.map(\.mode))
        for mode in [APIKey.Mode.test, .live] {
            let name = mode == .live ? "live" : "test"
            guard let table = node.table(name) else {
                if served.contains(mode) {
                    node.issues.add(node.child(name), "missing: the API keys serve \(name) mode, so Stripe needs its \(name) account")
                }
                continue
            }
            let account = readStripeAccount(table, mode: name, products: products)
            if mode == .live { settings.live = account } else { settings.test = account }
        }
        if let test = settings.test, let live = settings.live {
            if test.secretKey == live.secretKey { node.issues.add(node.child("live.secret_key"), "is the test account's key") }
            if !Set(test.webhookSecrets).isDisjoint(with: live.webhookSecrets) {
                // The secret that signs a webhook decides its mode: one secret for both would blur them.
                node.issues.add(node.child("live.webhook_secret"), "is also a test-mode signing secret; each mode's endpoint has its own")
            }
        }
        return settings
    }

    static func readStripeAccount(_ node: TOMLNode, mode: String, products: [ServerConfig.ProductConfig]) -> StripeSettings.Account? {
        node.allowOnly([
            "secret_key_env", "secret_key_file", "webhook_secret_env", "webhook_secret_file", "previous_webhook_secret_env",
            "previous_webhook_secret_file", "prices",
        ])
        let key = secret(node, "secret_key", required: true)
        if let key, !(key.value.hasPrefix("sk_\(mode)_") || key.value.hasPrefix("rk_\(mode)_")) {
            node.issues.add(node.child("secret_key"), "must be a \(mode)-mode key (sk_\(mode)_… or rk_\(mode)_…), got \(key)")
        }
        var webhookSecrets: [StripeSecret] = []
        for name in ["webhook_secret", "previous_webhook_secret"] {
            guard let value = secret(node, name, required: name == "webhook_secret") else { continue }
            if !value.value.hasPrefix("whsec_") { node.issues.add(node.child(name), "must be an endpoint signing secret (whsec_…)") }
            webhookSecrets.append(value)
        }
        var prices: [String: String] = [:]
        let table = node.table("prices")
        table?.allowOnly(Set(products.map(\.id)))
        for product in products where product.webPrice != nil {
            guard let price = table?.string(product.id, required: false) else {
                node.issues.add(node.child("prices.\(product.id)"), "missing: \(product.id) is sold on the web, so it needs its Stripe price (price_…)")
                continue
            }
            if !price.hasPrefix("price_") { table?.issues.add(table?.child(product.id) ?? product.id, "must be a Stripe price id (price_…)") }
            prices[product.id] = price
        }
        guard let key, webhookSecrets.count >= 1 else { return nil }
        return StripeSettings.Account(secretKey: key, webhookSecrets: webhookSecrets, prices: prices)
    }

    /// A secret from `<name>_env` (an environment variable) or `<name>_file` (a file only its
    /// owner can read). Never echoed in an issue.
    static func secret(_ node: TOMLNode, _ name: String, required: Bool) -> StripeSecret? {
        let variable = node.string("\(name)_env", required: false)
        let file = node.string("\(name)_file", required: false)
        switch (variable, file) {
        case (nil, nil):
            if required { node.issues.add(node.child(name), "missing: name \(name)_env (an environment variable) or \(name)_file") }
            return nil
        case (.some, .some):
            node.issues.add(node.child(name), "name \(name)_env or \(name)_file, not both")
            return nil
        case (let variable?, nil):
            guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
                node.issues.add(node.child("\(name)_env"), "the environment variable \(variable) is not set")
                return nil
            }
            return StripeSecret(value.trimmingCharacters(in: .whitespacesAndNewlines))
        case (nil, let path?):
            switch PrivateFile.readSecret(path) {
            case .success(let value): return StripeSecret(value)
            case .failure(let problem):
                node.issues.add(node.child("\(name)_file"), problem.message)
                return nil
            }
        }
    }
}
