import ArgumentParser
import Foundation
import RetentionDomain
import SaveDeskClient
import SaveDeskViewModels

/// `savedesk customers list|show|add|update`: look-ups and an operator's own customers.
struct CustomersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "customers", abstract: "Find customers, look at one, add or update one.",
        subcommands: [List.self, Show.self, Add.self, Update.self]
    )

    /// The fields `add` and `update` take.
    struct Fields: ParsableArguments {
        @Option(help: "The customer's name.") var name: String?
        @Option(help: "An email address.") var email: String?
        @Option(help: "A two-letter country code.") var country: String?
        @Option(help: "The App Store appAccountToken (a UUID) the app sets for this user.") var appAccountToken: String?
        @Option(help: "The customer's id at a payment provider that bills them elsewhere.") var billingCustomerId: String?
        @Option(help: "An App Store original transaction id that is this customer's (repeat for more).")
        var appStoreOriginalTransactionId: [String] = []

        var input: SaveDeskClient.CustomerFieldsInput {
            .init(name: name, email: email, country: country, appAccountToken: appAccountToken, billingCustomerId: billingCustomerId,
                  appStoreOriginalTransactionIds: appStoreOriginalTransactionId.isEmpty ? nil : appStoreOriginalTransactionId)
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "A new customer in the key's mode (audited).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The customer id (the app's user id).") var user: String
        @OptionGroup var fields: Fields

        func run() async throws {
            let (global, user, input) = (global, user, fields.input)
            try await Console.run(global) { app, output in
                let detail = try await app.client.createCustomer(id: user, input)
                output.document(detail)
                output.line("Added \(detail.profile.id)" + (detail.profile.name.isEmpty ? "" : " (\(detail.profile.name))"))
            }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "update", abstract: "Change the fields given of a customer (audited).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The customer id.") var user: String
        @OptionGroup var fields: Fields

        func run() async throws {
            let (global, user, input) = (global, user, fields.input)
            try await Console.run(global) { app, output in
                let detail = try await app.client.updateCustomer(id: user, input)
                output.document(detail)
                output.line("Updated \(detail.profile.id)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Customers by id, email or name.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Part of an id, email or name.") var query: String?
        @Option(help: "The page (from 1).") var page = 1
        @Option(help: "Customers per page (1–100).") var perPage = 20

        func run() async throws {
            let (global, query, page, perPage) = (global, query, page, perPage)
            try await Console.run(global) { app, output in
                let result = try await app.client.searchCustomers(query: query, page: page, perPage: perPage)
                output.document(result)
                output.table(["ID", "NAME", "EMAIL", "COUNTRY", "SUBSCRIPTION"],
                             result.customers.map { [$0.id, $0.name, $0.email, $0.country ?? "", $0.summary] })
                let pages = max(1, (result.total + result.perPage - 1) / result.perPage)
                output.line(output.dim("\(result.total) customer(s) · page \(result.page) of \(pages)"))
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "A customer's subscriptions, lifecycle, switch and save, and actions.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The customer id.") var user: String

        struct Document: Encodable {
            var customer: Wire.CustomerDetail
            var switchAndSave: SwitchAndSave?
            var actions: [Action]

            struct SwitchAndSave: Encodable {
                var state: String
                var reasons: [IneligibleReason]
            }

            struct Action: Encodable {
                var kind: String
                var productId: String?
                var available: Bool
                var note: String?
            }
        }

        func run() async throws {
            let (global, user) = (global, user)
            try await Console.run(global) { app, output in
                let detail = try await app.client.customer(id: user)
                let overview = app.makeOverview(customerId: user)
                await overview.load()
                let document = Document(
                    customer: detail,
                    switchAndSave: overview.switchAndSave.map { .init(state: $0.state.rawValue, reasons: $0.reasons) },
                    actions: overview.actions.map { .init(kind: $0.kind.rawValue, productId: $0.productId, available: $0.isAvailable, note: $0.note) }
                )
                output.document(document)
                let profile = detail.profile
                output.line(output.bold("\(profile.name)") + "  \(profile.id) · \(profile.email)" + (profile.country.map { " · \($0)" } ?? ""))
                output.table(["PRODUCT", "SOURCE", "STATE", "ACCESS", "SUMMARY"], overview.entitlements.map {
                    let state = $0.state.rawValue
                    let warning = $0.warning == .critical ? output.red(state) : $0.warning == .warning ? output.yellow(state) : state
                    return [$0.productId, Display.source($0.source), warning, $0.hasAccess ? "yes" : "no", $0.summary]
                })
                if let decision = overview.switchAndSave {
                    output.line("Switch and save: \(decision.state.rawValue)" + (decision.reasons.first.map { " · \($0.message)" } ?? ""))
                }
                output.line("Actions:")
                for action in overview.actions {
                    let mark = action.isAvailable ? output.green("yes") : output.dim("no ")
                    output.line("  \(mark)  \(action.kind.title)" + (action.productId.map { " (\($0))" } ?? "") + (action.note.map { output.dim(" · \($0)") } ?? ""))
                }
            }
        }
    }
}
