import Foundation
import RetentionDomain
import Synchronization

/// Who is asking, for which mode, and which request this is: a value every service that reads or
/// changes data takes as a parameter. Test and live data never mix, and that rests on this value,
/// never on a default: a handler takes the scope its request was authorized with
/// (`RequestScope.ofRequest()`), the App Store's notifications the one their signed environment
/// says, a background job one per mode (`RequestScope.job`).
struct RequestScope: Sendable {
    /// The name written to the audit trail: the operator, "app", "app_store", "billing", the
    /// portal's customer, or a job.
    var actor: String
    /// Whose idempotency keys these are: a digest of the API key, never the key itself.
    var principal: String
    var requestId: String
    /// Live data (`*_live_*` keys, Production App Store data) or test data. A scope only ever
    /// sees and changes data of its own mode.
    var livemode: Bool
    /// The digest of what the request asks (operation, path parameters, canonical body), which an
    /// Idempotency-Key is bound to.
    var fingerprint: String?
    /// The API middleware looked the request's Idempotency-Key up and found no answer stored
    /// within its lifetime (see `ChangeTransaction.recorded`, which then need not look again
    /// before a change's first run on PostgreSQL).
    var idempotencyKeyFree = false
    /// An app's call (a publishable key): what it creates is charged to the key's and the
    /// address's budgets. Operators' secret keys and Apple are not.
    var isPublishable = false
    /// The client's address, as the rate limits saw it (nil outside a request).
    var clientAddress: String?
    /// An operator's version precondition (`If-Match`): the customer's version its view was built
    /// on. A change to that customer someone else made since refuses this one (409).
    var expectedVersion: Int64?

    /// True for test-mode keys (`*_test_*`).
    var isSandbox: Bool { !livemode }

    init(key: APIKey, requestId: String, fingerprint: String? = nil) {
        actor = key.actor
        principal = key.principal
        self.requestId = requestId
        livemode = key.mode == .live
        self.fingerprint = fingerprint
        isPublishable = key.kind == .publishable
    }

    init(actor: String, principal: String, requestId: String, livemode: Bool) {
        self.actor = actor
        self.principal = principal
        self.requestId = requestId
        self.livemode = livemode
    }

    /// What a background job acts as, for one mode: it touches only that mode's data, at that
    /// mode's time.
    static func job(_ name: String, livemode: Bool) -> RequestScope {
        RequestScope(actor: name, principal: "job:\(name)", requestId: "\(name):\(livemode ? "live" : "test"):" + newRequestId(), livemode: livemode)
    }

    /// "req_" and what a random UUID's text begins with: 8-4-4 lower-case hex digits, the third
    /// group starting with its version, 4 ("req_1f0c…-…-4…"). Its 60 bits are 60 of
    /// `SplitMix64.mix` of a number the process counts up from a random start drawn once: the mix
    /// is one-to-one, so its outputs are spread as evenly as random draws and two ids agree no more
    /// often than two random 60-bit ones. A draw of the system's generator per id was a
    /// getrandom(2) system call per request (about 0.3 µs, most of the id's cost). An id names a
    /// request in logs and audit rows; nothing is decided by it, so it need not be unguessable.
    static func newRequestId() -> String {
        var bits = SplitMix64.mix(requestIdStart &+ requestIdCount.wrappingAdd(1, ordering: .relaxed).oldValue)
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: 22) { text in
            var count = 0
            for byte in "req_xxxxxxxx-xxxx-4xxx".utf8 {
                if byte == UInt8(ascii: "x") {
                    text[count] = digits.utf8Start[Int(bits & 0xF)]
                    bits >>= 4
                } else {
                    text[count] = byte
                }
                count += 1
            }
            return count
        }
    }

    private static let requestIdStart: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()
    private static let requestIdCount = Atomic<UInt64>(0)

    /// The scope the API middleware authorized the running request with (the generated server's
    /// handlers take no context, so it travels to them as a task-local, and from them on as a
    /// parameter). Only the middleware sets it; only the handlers read it.
    @TaskLocal fileprivate static var authorized: RequestScope?

    static func ofRequest() throws(SaveDeskError) -> RequestScope {
        guard let authorized else {
            throw SaveDeskError(status: 500, code: "internal", "an operation ran without the scope of an authorized request")
        }
        return authorized
    }

    /// Runs `body` (the request's operation) with `scope` as its authorized scope.
    static func authorizing<T>(_ scope: RequestScope, _ body: () async throws -> T) async throws -> T {
        try await $authorized.withValue(scope) { try await body() }
    }
}

/// SHA-256 hex digests for fingerprints and principals.
enum Fingerprint {
    static func of(text: String) -> String {
        of(data: Data(text.utf8))
    }

    static func of(data: Data) -> String {
        SHA256Digest.hex(data)
    }

    /// The digest of a value's canonical JSON (sorted keys).
    static func of(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return of(data: try encoder.encode(value))
    }
}

