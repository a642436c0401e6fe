import Foundation
import OpenAPIRuntime
import RetentionDomain

/// Dates in generated types coded as the wire codes them (`WireFormat`: ISO-8601, whole seconds,
/// UTC; fractional seconds and offsets accepted). OpenAPIRuntime's default transcoder does the same
/// through Foundation's `ISO8601DateFormatter`, which is CoreFoundation over ICU: decoding one date
/// with it maps several megabytes of ICU into the console. `WireFormat` reads and writes dates by
/// hand, strictly. Client and server both use this one.
public struct WireDateTranscoder: DateTranscoder {
    public init() {}

    public func encode(_ date: Date) throws -> String { WireFormat.formatDate(date) }

    public func decode(_ text: String) throws -> Date {
        guard let date = WireFormat.parseDate(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: WireFormat.notADate(text)))
        }
        return date
    }
}

extension Configuration {
    /// The generated client's and server's configuration: wire dates (`WireDateTranscoder`), and
    /// JSON bodies compact with sorted keys (the runtime's default pretty-prints every body: a
    /// third more bytes and encoding time on every answer; the headless commands print their own).
    public static var wire: Configuration { Configuration(dateTranscoder: WireDateTranscoder(), jsonEncodingOptions: [.sortedKeys]) }
}
