import Foundation

/// One problem in a config file, at a path such as `cancel_flow.questions[2].options[0]`.
public struct ConfigIssue: Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
}

/// A config that cannot be used, with every problem found in it.
public struct InvalidConfig: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var issues: [ConfigIssue]

    public init(file: String, issues: [ConfigIssue]) {
        self.file = file
        self.issues = issues
    }

    public var description: String {
        "\(file): \(issues.count) \(issues.count == 1 ? "error" : "errors")\n"
            + issues.map { "  \($0)" }.joined(separator: "\n")
    }
}
