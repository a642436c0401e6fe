import Foundation
import SaveDeskClient

/// A failure of a headless command: a sentence for stderr and the exit code scripts rely on.
struct CLIError: Error, CustomStringConvertible {
    /// 0 ok, 1 error, 2 usage, 4 auth, 5 not found (README).
    enum Code: Int32 {
        case failure = 1, usage = 2, auth = 4, notFound = 5
    }

    var message: String
    var code: Code

    var description: String { message }

    static func usage(_ message: String) -> CLIError { CLIError(message: message, code: .usage) }

    /// A client error, mapped once: no key or a refused key → auth; an unknown id → not found.
    init(_ error: SaveDeskClientError) {
        message = error.message
        switch error.kind {
        case .server(401, _), .server(403, _): code = .auth
        case .server(404, _): code = .notFound
        default: code = .failure
        }
    }

    init(message: String, code: Code) {
        self.message = message
        self.code = code
    }
}
