import Foundation
import Hummingbird
import Logging
import RetentionDomain
import SaveDeskClient
import Synchronization
import Testing

/// Client files that never lose a call: one outbox per server and key, items no other process can
/// replace, damaged files set aside with the reason and counted, a sync queue that keeps what it
/// cannot read and retries what a server did not definitively refuse.
@Suite("Client files")
struct ClientFilesTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-files-\(UUID())")
    }

    static let response = CancelFlow.Response(
        productId: "premium_monthly", userId: "cus_ava", outcome: .cancelled, answers: [], offerShown: false,
        offerAccepted: false, lastStepSeen: 0
    )

    @Test func eachServerAndKeyHasItsOwnOutbox() throws {
        let root = Self.folder()
        let test = Outbox.folder(in: root, serverURL: URL(string: "http://127.0.0.1:8080")!, key: "sk_test_a")
        let live = Outbox.folder(in: root, serverURL: URL(string: "http://127.0.0.1:8080")!, key: "sk_live_a")
        let other = Outbox.folder(in: root, serverURL: URL(string: "https://desk.example.com")!, key: "sk_test_a")
        #expect(Set([test, live, other]).count == 3)
        #expect(!test.path.contains("sk_test_a"), "the key is never part of a path")
        // The name an earlier version gave the folder (from swift-crypto's SHA-256) is kept, so what
        // waits there is still found: computed independently with Python's hashlib.
        #expect(test.lastPathComponent == "127.0.0.1-8080-a0a86b9194b3a6a6")
        // What an older version left in the shared folder is set aside, not sent to whoever starts.
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: root.appendingPathComponent("00000000000000000001.json"))
        let outbox = try Outbox(directory: test)
        #expect(outbox.setAsideLegacyItems(in: root) == 1)
        #expect(outbox.pending().isEmpty && outbox.rejectedCount == 1)
        let reason = try String(contentsOf: outbox.rejectedDirectory.appendingPathComponent("00000000000000000001.json.reason"), encoding: .utf8)
        #expect(reason.contains("server it was meant for is not known"))
    }

    @Test func processesSharingAFolderNeverReplaceEachOthersItems() async throws {
        let directory = Self.folder()
        // Two outboxes on one folder, as the terminal UI and a headless command would have.
        let first = try Outbox(directory: directory), second = try Outbox(directory: directory)
        await withTaskGroup(of: Void.self) { group in
            for outbox in [first, second] {
                group.addTask { for _ in 0..<150 { _ = try? outbox.enqueue(.cancelFlowResponse, body: Self.response) } }
            }
        }
        let items = first.pending()
        #expect(items.count == 300 && Set(items.map(\.id)).count == 300)
        // Creating a file is exclusive: an existing name is never overwritten.
        let file = directory.appendingPathComponent("taken.json")
        #expect(try DurableFile.create(Data("one".utf8), at: file))
        #expect(try !DurableFile.create(Data("two".utf8), at: file))
        #expect(try String(contentsOf: file, encoding: .utf8) == "one")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aDamagedItemIsSetAsideWithItsReasonAndCounted() async throws {
        let directory = Self.folder()
        let outbox = try Outbox(directory: directory)
        try Data("not json".utf8).write(to: directory.appendingPathComponent("00000000000000000001-0-0.json"))
        try outbox.enqueue(.cancelFlowResponse, body: Self.response)
        #expect(outbox.pending().count == 1)
        #expect(outbox.rejectedCount == 1)
        // An item whose body is not what its kind needs cannot be sent: set aside too, not retried forever.
        try outbox.enqueue(.cancelFlowResponse, body: ["surprise": true])
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let client = SaveDeskClient(serverURL: server.url, key: LocalServer.appKey, outbox: outbox)
        let report = await outbox.deliver(using: client)
        #expect(report.delivered == 1 && report.rejected == 1 && report.remaining == 0)
        #expect(outbox.rejectedCount == 2)
        let reasons = try FileManager.default.contentsOfDirectory(atPath: outbox.rejectedDirectory.path).filter { $0.hasSuffix(".reason") }
        #expect(reasons.count == 2)
    }

    /// The status bar's count (several times a second) lists the folder and reads nothing: a
    /// damaged file is counted where it lies, and only a delivery pass, or `pending`, sets it aside.
    @Test func theWaitingCountListsTheFolderAndReadsNoItem() async throws {
        let directory = Self.folder()
        let outbox = try Outbox(directory: directory)
        for _ in 0..<3 { try outbox.enqueue(.cancelFlowResponse, body: Self.response) }
        try Data("not json".utf8).write(to: directory.appendingPathComponent("00000000000000000001-0-0.json"))
        #expect(outbox.waitingCount == 4 && outbox.rejectedCount == 0)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("00000000000000000001-0-0.json").path))
        #expect(outbox.pending().count == 3)
        #expect(outbox.waitingCount == 3 && outbox.rejectedCount == 1)
    }

    @Test func anUnreadableSyncQueueIsKeptAsideAndWriteFailuresAreReported() throws {
        let file = Self.folder().appendingPathComponent("storekit-sync-queue.json")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let damaged = Data(#"[{"transactionId":"t1","jws":"eyJ…"#.utf8)
        try damaged.write(to: file)
        let queue = try StoreKitSyncQueue(file: file)
        let aside = try #require(queue.setAside)
        #expect(FileManager.default.contents(atPath: aside.path) == damaged, "nothing overwritten")
        #expect(queue.pending().isEmpty && !FileManager.default.fileExists(atPath: file.path))
        // A write that cannot happen (the file's place is taken by a folder) is reported.
        try FileManager.default.createDirectory(at: file.appendingPathComponent("blocker"), withIntermediateDirectories: true)
        let events = Mutex<[StoreKitSyncQueue.Event]>([])
        queue.addListener { event in events.withLock { $0.append(event) } }
        queue.logOut()
        #expect(queue.writeError?.contains("could not be saved") == true)
        #expect(events.withLock { $0 }.contains { if case .writeFailed = $0 { return true } else { return false } })
    }

    /// A server that answers every StoreKit sync with a chosen status and body.
    struct OddServer {
        let url: URL
        let task: Task<Void, any Error>

        static func start(status: HTTPResponse.Status, body: String, contentType: String) async throws -> OddServer {
            let router = Router()
            router.post("/v1/iap/storekit-transactions") { _, _ in
                Response(status: status, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(string: body)))
            }
            let (bound, continuation) = AsyncStream<Int>.makeStream()
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { continuation.yield($0.localAddress?.port ?? 0); continuation.finish() },
                logger: Logger(label: "odd") { _ in SwiftLogNoOpLogHandler() }
            )
            let task = Task { try await app.runService(gracefulShutdownSignals: []) }
            var iterator = bound.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            return OddServer(url: URL(string: "http://127.0.0.1:\(port)")!, task: task)
        }
    }

    @Test(arguments: [
        (401, #"{"error":"this API key is not known","code":"unauthorized"}"#, "application/json", true),
        (408, #"{"error":"slow","code":"request_timeout"}"#, "application/json", true),
        (429, #"{"error":"slow down","code":"rate_limited"}"#, "application/json", true),
        (503, "<html><body>Service Unavailable</body></html>", "text/html", true),
        (404, "<html><body>Not Found (proxy)</body></html>", "text/html", true),
        (422, #"{"error":"the signature does not match","code":"jws_bad_signature"}"#, "application/json", false),
        (404, #"{"error":"no customer","code":"unknown_user"}"#, "application/json", false),
    ])
    func onlyADefinitiveRefusalAbandonsASync(status: Int, body: String, contentType: String, retried: Bool) async throws {
        let server = try await OddServer.start(status: .init(code: status), body: body, contentType: contentType)
        defer { server.task.cancel() }
        let client = SaveDeskClient(serverURL: server.url, key: LocalServer.appKey, timeout: .seconds(2))
        let queue = try StoreKitSyncQueue(file: Self.folder().appendingPathComponent("queue.json"))
        let result = await queue.sync(jws: "a.b.c", transactionId: "t1", originalTransactionId: "o1", userId: "cus_ava", using: client)
        #expect(result == nil)
        #expect(queue.pending().count == (retried ? 1 : 0), "\(status) \(contentType)")
        if retried { #expect(queue.nextAttempt != nil) }
    }
}
