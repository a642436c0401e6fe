import Foundation
import Glibc
import Logging
import RetentionDomain

/// One JSON object a line on standard error (`--log-format json`): `time` (UTC, milliseconds),
/// `level`, `logger` (the label), `message`, then the metadata's fields (`request_id`,
/// `operation`, `status`, `latency_ms`, `actor`…; a field named like one of the first four is
/// written `meta_<name>`). Always behind `RedactingLogHandler`, so no key or token reaches it.
/// Each line is one write, so lines of concurrent requests never interleave.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    static let reserved: Set<String> = ["time", "level", "logger", "message"]

    func log(event: LogEvent) {
        var fields = metadata
        if let own = event.metadata { fields.merge(own) { _, new in new } }
        var line = Self.line(time: Date(), level: event.level, label: label, message: event.message.description, metadata: fields)
        line += "\n"
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { if errno == EINTR { continue } else { return } }
                offset += written
            }
        }
    }

    /// The JSON text of one line (without its newline).
    static func line(time: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var out = "{\"time\":"
        StrictJSON.writeString(timestamp(time), into: &out)
        out += ",\"level\":"
        StrictJSON.writeString(level.rawValue, into: &out)
        out += ",\"logger\":"
        StrictJSON.writeString(label, into: &out)
        out += ",\"message\":"
        StrictJSON.writeString(message, into: &out)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            out += ","
            StrictJSON.writeString(reserved.contains(key) ? "meta_" + key : key, into: &out)
            out += ":"
            append(value, into: &out)
        }
        out += "}"
        return out
    }

    /// `2026-11-25T14:03:07.123Z`: the wire's date with milliseconds.
    static func timestamp(_ time: Date) -> String {
        let interval = time.timeIntervalSince1970
        let milliseconds = Int(((interval - interval.rounded(.down)) * 1000).rounded(.down))
        let digits = String(milliseconds)
        return WireFormat.formatDate(time).dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    static func append(_ value: Logger.Metadata.Value, into out: inout String) {
        switch value {
        case .string(let text): StrictJSON.writeString(text, into: &out)
        case .stringConvertible(let convertible): StrictJSON.writeString(convertible.description, into: &out)
        case .array(let values):
            out += "["
            for (index, item) in values.enumerated() {
                if index > 0 { out += "," }
                append(item, into: &out)
            }
            out += "]"
        case .dictionary(let values):
            out += "{"
            for (index, (key, item)) in values.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out += "," }
                StrictJSON.writeString(key, into: &out)
                out += ":"
                append(item, into: &out)
            }
            out += "}"
        }
    }
}
