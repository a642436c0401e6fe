import Logging
import RetentionDomain

/// Wraps the log handler that writes (a stream, a file, JSON): every message, metadata value and
/// error passes `SecretRedaction` first, whatever its level and whoever logs it (the server, the
/// HTTP server, the database driver), and has its control characters written as escapes (`\n`,
/// `\u{1b}`), so text a client sent (a user id) can never forge a line or drive a terminal. The server's loggers are always made through it
/// (`ServerLogging`, and `SaveDeskBackend` wraps any logger it is given).
public struct RedactingLogHandler: LogHandler {
    private var wrapped: any LogHandler
    /// Kept here, not in the wrapped handler, so it is redacted with the rest.
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    public init(wrapping handler: any LogHandler) {
        var handler = handler
        metadata = handler.metadata
        metadataProvider = handler.metadataProvider
        if !handler.metadata.isEmpty { handler.metadata = [:] }
        // (A handler without metadata providers warns when one is set, even to nil.)
        if handler.metadataProvider != nil { handler.metadataProvider = nil }
        wrapped = handler
    }

    /// The logger's handler, wrapped unless it already is.
    public static func wrap(_ logger: Logger) -> Logger {
        guard !(logger.handler is RedactingLogHandler) else { return logger }
        var logger = logger
        logger.handler = RedactingLogHandler(wrapping: logger.handler)
        return logger
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        // Every line written while a request runs says which request (the access log's id).
        if merged["request_id"] == nil, let trace = RequestTrace.running { merged["request_id"] = .string(trace.id) }
        if let error = event.error {
            merged["error"] = merged["error"] ?? .string("\(error)")
            event.error = nil
        }
        event.metadata = merged.isEmpty ? nil : merged.mapValues(Self.redact)
        event.message = "\(Self.printable(SecretRedaction.redact(event.message.description)))"
        wrapped.log(event: event)
    }

    /// `text` with its control characters (C0, DEL, C1) as visible escapes.
    static func printable(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        return text.replacingScalars { scalar in
            guard isControl(scalar) else { return nil }
            switch scalar {
            case "\n": return "\\n"
            case "\r": return "\\r"
            case "\t": return "\\t"
            default: return "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
    }

    static func redact(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(printable(SecretRedaction.redact(text)))
        case .stringConvertible(let convertible): .string(printable(SecretRedaction.redact(convertible.description)))
        case .array(let values): .array(values.map(redact))
        case .dictionary(let values): .dictionary(values.mapValues(redact))
        }
    }
}

/// How the server's processes set up logging: every handler redacts secrets.
public enum ServerLogging {
    /// How lines are written: text (swift-log's stream format) or one JSON object a line.
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    /// Bootstraps swift-log for this process: lines to standard error at `level`, in `format`,
    /// redacted.
    public static func bootstrap(level: Logger.Level, format: Format = .text) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = switch format {
            case .text: StreamLogHandler.standardError(label: label)
            case .json: JSONLogHandler(label: label)
            }
            handler.logLevel = level
            return RedactingLogHandler(wrapping: handler)
        }
    }
}
