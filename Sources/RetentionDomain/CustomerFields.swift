/// What a customer record may hold, checked the same way wherever customers come in: an
/// operator's create or update (the Desk API, `savedesk customers add/update`) and the import of a
/// company's base (`savedesk-server import customers`). Each check gives the value as it is kept
/// (trimmed; a country upper case, an app account token lower case) or says why not.
public enum CustomerFields {
    /// A field of a customer as files and the API name it.
    public enum Field: String, Sendable, CaseIterable {
        case id, name, email, country, mode
        case appAccountToken = "app_account_token"
        case billingCustomerId = "billing_customer_id"
        case appStoreOriginalTransactionIds = "app_store_original_transaction_ids"
    }

    /// Why a value was refused.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public var field: Field
        public var message: String
        public init(_ field: Field, _ message: String) {
            self.field = field
            self.message = message
        }
        public var description: String { "\(field.rawValue): \(message)" }
    }

    /// Every problem with one customer's values.
    public struct Problems: Error, Equatable, Sendable {
        public var list: [Problem]
    }

    /// The most original transaction ids one customer brings at once.
    public static let maxOriginalTransactionIds = 100

    /// The values of one customer, each nil when not given (an update leaves it as it is).
    public struct Values: Equatable, Sendable {
        public var id: String
        public var name: String?
        public var email: String?
        public var country: String?
        public var appAccountToken: String?
        public var billingCustomerId: String?
        public var originalTransactionIds: [String]

        public init(
            id: String, name: String? = nil, email: String? = nil, country: String? = nil, appAccountToken: String? = nil,
            billingCustomerId: String? = nil, originalTransactionIds: [String] = []
        ) {
            self.id = id
            self.name = name
            self.email = email
            self.country = country
            self.appAccountToken = appAccountToken
            self.billingCustomerId = billingCustomerId
            self.originalTransactionIds = originalTransactionIds
        }

        /// The values as kept, or every problem with them. Empty text is "not given".
        public static func check(
            id: String, name: String?, email: String?, country: String?, appAccountToken: String?, billingCustomerId: String?,
            originalTransactionIds: [String]
        ) -> Result<Values, Problems> {
            var problems: [Problem] = []
            func given(_ text: String?) -> String? { text.map(\.trimmedOfWhitespace).flatMap { $0.isEmpty ? nil : $0 } }
            func keep<T>(_ result: Result<T, Problem>?) -> T? {
                switch result {
                case .success(let value)?: return value
                case .failure(let problem)?: problems.append(problem); return nil
                case nil: return nil
                }
            }
            let id = keep(CustomerFields.id(id)) ?? id
            let values = Values(
                id: id, name: keep(given(name).map(CustomerFields.name)), email: keep(given(email).map(CustomerFields.email)),
                country: keep(given(country).map(CustomerFields.country)), appAccountToken: keep(given(appAccountToken).map(CustomerFields.appAccountToken)),
                billingCustomerId: keep(given(billingCustomerId).map(CustomerFields.billingCustomerId)),
                originalTransactionIds: keep(CustomerFields.originalTransactionIds(originalTransactionIds)) ?? []
            )
            return problems.isEmpty ? .success(values) : .failure(Problems(list: problems))
        }
    }

    /// A user id as the API takes it: 1 to 255 characters, no NUL, no white space at either end.
    /// Case-sensitive and kept as it is.
    public static func id(_ text: String) -> Result<String, Problem> {
        guard !text.isEmpty else { return .failure(.init(.id, "missing")) }
        guard text.count <= 255 else { return .failure(.init(.id, "longer than 255 characters")) }
        guard !text.unicodeScalars.contains("\u{0}") else { return .failure(.init(.id, "holds a NUL character")) }
        guard text.trimmedOfWhitespace == text else { return .failure(.init(.id, "has white space at an end")) }
        return .success(text)
    }

    /// A name: at most 200 characters, no control characters.
    public static func name(_ text: String) -> Result<String, Problem> {
        guard text.count <= 200 else { return .failure(.init(.name, "longer than 200 characters")) }
        guard text.removingControlCharacters == text else { return .failure(.init(.name, "holds a control character")) }
        return .success(text)
    }

    /// An email address: one `@` between a local part (at most 64 characters) and a domain with a
    /// dot, no white space or control characters, at most 254 characters; kept as given.
    public static func email(_ text: String) -> Result<String, Problem> {
        let invalid = Problem(.email, "not an email address: \"\(quoted(text))\"")
        guard text.count <= 254, !text.contains(where: { $0.isWhitespace }), text.removingControlCharacters == text else { return .failure(invalid) }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return .failure(invalid) }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else { return .failure(invalid) }
        return .success(text)
    }

    /// An ISO 3166-1 alpha-2 country code (two letters; kept upper case).
    public static func country(_ text: String) -> Result<String, Problem> {
        let upper = text.uppercased()
        guard upper.count == 2, upper.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) else {
            return .failure(.init(.country, "not a two-letter country code: \"\(quoted(text))\""))
        }
        return .success(upper)
    }

    /// An App Store app account token: a UUID (8-4-4-4-12 hexadecimal digits; kept lower case).
    public static func appAccountToken(_ text: String) -> Result<String, Problem> {
        let lower = text.lowercased()
        let groups = lower.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        guard groups == [8, 4, 4, 4, 12], lower.unicodeScalars.allSatisfy({ $0 == "-" || ("0"..."9").contains($0) || ("a"..."f").contains($0) }) else {
            return .failure(.init(.appAccountToken, "not a UUID: \"\(quoted(text))\""))
        }
        return .success(lower)
    }

    /// A payment provider's customer id: 1 to 255 characters, no white space or control characters.
    public static func billingCustomerId(_ text: String) -> Result<String, Problem> {
        guard text.count <= 255, !text.contains(where: { $0.isWhitespace }), text.removingControlCharacters == text else {
            return .failure(.init(.billingCustomerId, "not an id (1–255 characters, no spaces): \"\(quoted(text))\""))
        }
        return .success(text)
    }

    /// App Store original transaction ids: digits, 1 to 32 each, at most
    /// `maxOriginalTransactionIds`, duplicates dropped.
    public static func originalTransactionIds(_ ids: [String]) -> Result<[String], Problem> {
        let field = Field.appStoreOriginalTransactionIds
        guard ids.count <= maxOriginalTransactionIds else { return .failure(.init(field, "more than \(maxOriginalTransactionIds)")) }
        var kept: [String] = []
        for id in ids.map(\.trimmedOfWhitespace) where !id.isEmpty {
            guard id.count <= 32, id.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else {
                return .failure(.init(field, "not an original transaction id (digits): \"\(quoted(id))\""))
            }
            if !kept.contains(id) { kept.append(id) }
        }
        return .success(kept)
    }

    /// A value as a message shows it: control characters dropped, at most 40 characters.
    static func quoted(_ text: String) -> String {
        let clean = text.removingControlCharacters
        return clean.count > 40 ? String(clean.prefix(40)) + "…" : clean
    }
}
