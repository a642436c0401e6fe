// `make bench`: request throughput and latency of the SaveDesk backend next to a bare
// Hummingbird route, in the same process and run, over loopback. Not a test: it reports
// figures (median and spread over runs) and the machine they were taken on.
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import SaveDeskServer
import Synchronization

struct Scenario {
    var name: String
    var method: HTTPMethod
    var path: String
    /// A body for request number `n` (unique idempotency keys need unique requests).
    var body: (@Sendable (Int) -> String)?
    var headers: [(String, String)]
}

struct RunResult {
    var requests: Int
    var seconds: Double
    var latencies: [Double]  // milliseconds, sorted
    var failures: Int
    /// The bench process's CPU time (user and system) during the run: its servers and its client.
    var cpuSeconds: Double
    /// The whole machine's busy CPU time during the run: the bench, and the PostgreSQL cluster
    /// (its own processes) and whatever else ran.
    var machineCPUSeconds: Double

    var throughput: Double { Double(requests) / seconds }
    /// CPU milliseconds per request, client included: steadier than req/s on a machine whose
    /// neighbours take its cores for a while (time taken so is not this process's).
    var cpuPerRequestMs: Double { requests == 0 ? .nan : cpuSeconds * 1000 / Double(requests) }
    /// The machine's CPU milliseconds per request: for PostgreSQL, the database's part too.
    var machinePerRequestMs: Double { requests == 0 ? .nan : machineCPUSeconds * 1000 / Double(requests) }
    func percentile(_ p: Double) -> Double {
        guard !latencies.isEmpty else { return .nan }
        return latencies[min(latencies.count - 1, Int((Double(latencies.count) * p).rounded(.up)) - 1)]
    }
}

func argument(_ name: String, default value: Int) -> Int {
    precondition(valueOptions.contains { $0.name == name && $0.range != nil }, "\(name) is read as a number but not listed so in valueOptions")
    // Checked against its range before anything ran (below).
    return stringArgument(name).flatMap { Int($0) } ?? value
}

func stringArgument(_ name: String) -> String? {
    precondition(valueOptions.contains { $0.name == name }, "\(name) is read but not listed in valueOptions (its --help)")
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// The bench's parts; `--only a,b` runs only those (by default, all). `--tui-only`,
/// `--hostile-only`, `--events-only` and `--retention-only` are `--only` of one part.
enum Part: String, CaseIterable {
    /// GET cancel-flow next to a bare Hummingbird route.
    case http
    /// The durable mutation: SQLite FULL and NORMAL, PostgreSQL one and two instances.
    case writes
    /// Customer search at 100k and 1M customers, and the import that brings the first 100k.
    case search
    /// The event stream's subscribers and fan-out.
    case events
    /// Apple's cancel page.
    case retention
    /// Hostile request bodies, with the rate limits on.
    case hostile
    /// The cancel-flow funnel over 10M responses.
    case funnel
    /// The terminal UI and its peers.
    case tui
}

/// The parts' names, as `--only` takes them.
let partNames = Part.allCases.map(\.rawValue).joined(separator: ",")

/// An option the bench reads with a value; a number's value must lie in `range`.
struct ValueOption {
    var name: String
    var help: String
    var range: ClosedRange<Int>? = nil
}

/// The options the bench reads, each with a value, and its flags. `--help` prints them and runs
/// nothing (it ran the whole bench, half an hour); any other `--…` is refused, where a misspelt
/// option (`--second 5`) used to run every part with the defaults, and so is a number outside its
/// range or not a number (`--seconds five` ran with the default) and an unknown part of `--only`
/// (a trap). (Each default is where the option is read, once.)
let valueOptions = [
    ValueOption(name: "--seconds", help: "seconds per run", range: 1...3_600),
    ValueOption(name: "--runs", help: "runs per scenario", range: 1...1_000),
    ValueOption(name: "--concurrency", help: "concurrent clients", range: 1...1_024),
    ValueOption(name: "--only", help: "parts to run, comma-separated: " + partNames),
    ValueOption(name: "--search-customers", help: "customers of the first search database, 0 for none", range: 0...10_000_000),
    ValueOption(name: "--search-customers-large", help: "customers of the second, 0 for none", range: 0...10_000_000),
    ValueOption(name: "--subscribers", help: "event-stream subscribers", range: 1...10_000),
    ValueOption(name: "--funnel-responses", help: "generated cancel-flow responses, 0 for none", range: 0...100_000_000),
    ValueOption(name: "--textual-python", help: "the Python that runs the Textual peer"),
    ValueOption(name: "--bubbletea", help: "the Bubble Tea peer's binary"),
    ValueOption(name: "--tui-rs", help: "the tui-rs peer's binary"),
]
/// The parts that have a flag of their own, `--PART-only`.
let partsWithFlags: [Part] = [.tui, .hostile, .events, .retention]
let flagOptions = partsWithFlags.map { "--\($0.rawValue)-only" }
do {
    let usage = "usage: savedesk-bench [option value]… [" + flagOptions.joined(separator: " | ") + "]\n"
        + valueOptions.map { option in
            let range = option.range.map { " (\($0.lowerBound)–\($0.upperBound))" } ?? ""
            return "  \(option.name.padding(toLength: 26, withPad: " ", startingAt: 0))\(option.help)\(range)"
        }.joined(separator: "\n")
        + "\n(make bench and make bench-tui pass the peers and a PostgreSQL cluster)\n"
    func refuse(_ problem: String) -> Never {
        FileHandle.standardError.write(Data("savedesk-bench: \(problem)\n\(usage)".utf8))
        exit(2)
    }
    var arguments = CommandLine.arguments.dropFirst()[...]
    while let option = arguments.popFirst() {
        if option == "--help" || option == "-h" {
            print(usage, terminator: "")
            exit(0)
        }
        if flagOptions.contains(option) { continue }
        guard let known = valueOptions.first(where: { $0.name == option }), let value = arguments.popFirst() else {
            refuse("\(option) is not an option, or has no value")
        }
        if let range = known.range, !(Int(value).map(range.contains) ?? false) {
            refuse("\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(value)\"")
        }
        if option == "--only", let unknown = value.split(separator: ",", omittingEmptySubsequences: false).first(where: { Part(rawValue: String($0)) == nil }) {
            refuse("--only: \"\(unknown)\" is not a part (\(partNames))")
        }
    }
}
let parts: Set<Part> = {
    for (part, flag) in zip(partsWithFlags, flagOptions) where CommandLine.arguments.contains(flag) { return [part] }
    guard let list = stringArgument("--only") else { return Set(Part.allCases) }
    // Each name was checked before anything ran (above).
    return Set(list.split(separator: ",").compactMap { Part(rawValue: String($0)) })
}()
let seconds = Double(argument("--seconds", default: 4))
let concurrency = argument("--concurrency", default: 16)
let runs = argument("--runs", default: 3)

/// Runs `scenario` for `seconds` with `concurrency` workers; with several base URLs (instances
/// of one service), the workers are spread over them in turn.
func run(_ scenario: Scenario, baseURL: String, client: HTTPClient) async -> RunResult {
    await run(scenario, baseURLs: [baseURL], client: client)
}

func run(_ scenario: Scenario, baseURLs: [String], client: HTTPClient) async -> RunResult {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    let counter = Counter()
    // Each request's Idempotency-Key: this run's own prefix and the request's number (Foundation's
    // UUID() opens /dev/urandom each time: load on the machine the server shares).
    let keyPrefix = "bench-\(UUID().uuidString)-"
    let cpuAtStart = processCPUSeconds(), machineAtStart = machineCPUSeconds()
    let start = ContinuousClock.now
    let perWorker = await withTaskGroup(of: ([Double], Int).self) { group in
        for worker in 0..<concurrency {
            let baseURL = baseURLs[worker % baseURLs.count]
            group.addTask {
                var latencies: [Double] = []
                var failures = 0
                while ContinuousClock.now < deadline {
                    let n = counter.next()
                    var request = HTTPClientRequest(url: baseURL + scenario.path)
                    request.method = scenario.method
                    for (name, value) in scenario.headers { request.headers.add(name: name, value: value) }
                    if let body = scenario.body?(n) {
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.headers.add(name: "Idempotency-Key", value: keyPrefix + String(n))
                        request.body = .bytes(ByteBuffer(string: body))
                    }
                    let began = ContinuousClock.now
                    do {
                        let response = try await client.execute(request, timeout: .seconds(10))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        if response.status != .ok { failures += 1 }
                    } catch {
                        failures += 1
                    }
                    let elapsed = ContinuousClock.now - began
                    latencies.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
                }
                return (latencies, failures)
            }
        }
        return await group.reduce(into: [([Double], Int)]()) { $0.append($1) }
    }
    let elapsed = ContinuousClock.now - start
    let all = perWorker.flatMap(\.0).sorted()
    return RunResult(
        requests: all.count, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
        latencies: all, failures: perWorker.map(\.1).reduce(0, +), cpuSeconds: processCPUSeconds() - cpuAtStart,
        machineCPUSeconds: machineCPUSeconds() - machineAtStart
    )
}

/// This process's CPU time so far (user and system), in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// The machine's busy CPU time so far, every core and process (`/proc/stat`), in seconds; 0
/// where there is no `/proc/stat`.
func machineCPUSeconds() -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
          let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return 0 }
    let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard ticks.count >= 8 else { return 0 }
    // user nice system idle iowait irq softirq steal: busy is user to softirq but idle and
    // iowait (steal is time the host gave to other machines).
    let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]
    return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Numbers the requests of a run across its workers.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}

func machine() -> String {
    let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
    let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?
        .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(model), \(ProcessInfo.processInfo.physicalMemory >> 30) GiB"
}

LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-bench-\(UUID())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let database = directory.appendingPathComponent("bench.sqlite").path
guard let configPath = DemoSeed.demoConfigPath, let seedPath = DemoSeed.demoSeedPath else { fatalError("demo files missing") }
/// The demo config with rate limits off: these figures measure the server, and sixteen clients on
/// one address would otherwise measure the limiter (the hostile-bodies row runs with it on).
let limitedConfig = try ConfigReader.load(file: configPath)
var config = limitedConfig
config.rateLimits.enabled = false
_ = try await DemoSeed.apply(file: seedPath, config: config, databasePath: database)
let savedesk = try await SaveDeskBackend.start(config: config, databasePath: database)
// The same server with synchronous=NORMAL, to show what durability against power loss costs.
let normalDatabase = directory.appendingPathComponent("bench-normal.sqlite").path
_ = try await DemoSeed.apply(file: seedPath, config: config, databasePath: normalDatabase)
let savedeskNormal = try await SaveDeskBackend.start(
    config: config, databasePath: normalDatabase, options: .init(testClock: true, durability: .normal)
)

// Customer search over 100,000 more customers (test mode, each with a subscription), and over
// 1,000,000 in a second database.
let searchCount = !parts.contains(.search) ? 0 : argument("--search-customers", default: 100_000)
let largeSearchCount = !parts.contains(.search) ? 0 : argument("--search-customers-large", default: 1_000_000)
/// The search servers: the label the rows carry, and where each runs.
var searchServers: [(label: String, baseURL: String)] = []
var importFigure: String?
if searchCount > 0 {
    let searchDatabase = directory.appendingPathComponent("bench-search.sqlite").path
    _ = try await DemoSeed.apply(file: seedPath, config: config, databasePath: searchDatabase)
    // The customers come in as an operator brings them: `savedesk-server import customers` of a CSV.
    let (importSeconds, imported) = try await ImportBench.run(count: searchCount, databasePath: searchDatabase, directory: directory)
    guard imported.succeeded, imported.created == searchCount else { fatalError("the import failed: \(imported.problems.prefix(3))") }
    importFigure = String(format: "import customers, CSV → SQLite (synchronous=FULL), %dk rows: %.1f s, %.0f rows/s (target: 100k in < 60 s; one run)",
                          searchCount / 1000, importSeconds, Double(searchCount) / importSeconds)
    try await SearchBench.generate(count: searchCount, databasePath: searchDatabase, withCustomers: false)
    searchServers.append(("\(searchCount / 1000)k", try await SaveDeskBackend.start(config: config, databasePath: searchDatabase).baseURL))
}
if largeSearchCount > 0 {
    // At this size the import would take minutes of the bench's run: the bulk loader writes the
    // same customers (the search index follows by its triggers).
    let largeDatabase = directory.appendingPathComponent("bench-search-large.sqlite").path
    _ = try await DemoSeed.apply(file: seedPath, config: config, databasePath: largeDatabase)
    try await SearchBench.generate(count: largeSearchCount, databasePath: largeDatabase)
    // And, as the import ends, the search index merged.
    let loaded = try await Store.open(path: largeDatabase, logger: Logger(label: "bench"))
    try await loaded.compactSearchIndex()
    await loaded.close()
    let label = largeSearchCount >= 1_000_000 ? "\(largeSearchCount / 1_000_000)M" : "\(largeSearchCount / 1000)k"
    searchServers.append((label, try await SaveDeskBackend.start(config: config, databasePath: largeDatabase).baseURL))
}

// PostgreSQL (when the run has a cluster: `make bench` starts one): two instances on one database.
let postgresURL = ProcessInfo.processInfo.environment["SAVEDESK_TEST_POSTGRES"].map { $0 + "/postgres" }
var postgresInstances: [SaveDeskBackend.Running] = []
if let postgresURL {
    _ = try await DemoSeed.apply(file: seedPath, config: config, databasePath: postgresURL)
    // As `savedesk-server serve` runs them: without `--test-clock` (a demo's), whose instances on
    // one database read test time's offset again before each test-mode request.
    for _ in 0..<2 {
        postgresInstances.append(try await SaveDeskBackend.start(config: config, databasePath: postgresURL, options: .init(testClock: false)))
    }
}

let router = Router()
router.get("/bare") { _, _ in "ok" }
let (barePort, bound) = AsyncStream<Int>.makeStream()
let bareApp = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
    onServerRunning: { channel in bound.yield(channel.localAddress?.port ?? 0); bound.finish() }
)
let bareTask = Task { try await bareApp.runService(gracefulShutdownSignals: []) }
var bareURL = "http://127.0.0.1:0"
for await port in barePort {
    bareURL = "http://127.0.0.1:\(port)"
    break
}

let key = [("X-ZeroSettle-Key", "pk_test_savedesk_demo_app_0001")]
let operatorKey = [("X-ZeroSettle-Key", "sk_test_savedesk_demo_marco_0001")]
let respondBody: @Sendable (Int) -> String = { _ in
    #"{"user_id":"cus_ava","product_id":"premium_monthly","outcome":"retained","offer_shown":true,"offer_accepted":true,"pause_shown":false,"pause_accepted":false,"last_step_seen":3,"answers":[{"question_id":1,"selected_option_id":11}]}"#
}
/// A response from one of the demo customers in turn: one customer's changes queue on its lock,
/// so a load meant to show several instances working at once spreads over customers.
let spreadRespondBody: @Sendable (Int) -> String = { n in
    let customer = FunnelBench.customers[n % FunnelBench.customers.count]
    return #"{"user_id":"\#(customer)","product_id":"premium_monthly","outcome":"retained","offer_shown":true,"offer_accepted":true,"pause_shown":false,"pause_accepted":false,"last_step_seen":3,"answers":[{"question_id":1,"selected_option_id":11}]}"#
}
let respond = "/v1/iap/cancel-flow/respond"
/// Each scenario with its part of the bench and the servers it runs on.
var scenarios: [(Part, Scenario, [String])] = [
    (.http, Scenario(name: "bare Hummingbird GET /bare", method: .GET, path: "/bare", body: nil, headers: []), [bareURL]),
    (.http, Scenario(name: "GET /v1/iap/cancel-flow", method: .GET, path: "/v1/iap/cancel-flow", body: nil, headers: key), [savedesk.baseURL]),
    (.writes, Scenario(name: "POST cancel-flow/respond (synchronous=FULL)", method: .POST, path: respond, body: respondBody, headers: key),
     [savedesk.baseURL]),
    (.writes, Scenario(name: "POST cancel-flow/respond (synchronous=NORMAL)", method: .POST, path: respond, body: respondBody, headers: key),
     [savedeskNormal.baseURL]),
]
for (label, baseURL) in searchServers {
    for (name, query) in [("<an email>", "customer4242%40bench"), ("okafor", "okafor"), ("ha", "ha")] {
        scenarios.append((.search, Scenario(name: "GET customers?query=\(name) (\(label))", method: .GET,
                                            path: "/v1/desk/customers?query=\(query)&per_page=15", body: nil, headers: operatorKey), [baseURL]))
    }
    scenarios.append((.search, Scenario(name: "GET customers, first page (\(label))", method: .GET, path: "/v1/desk/customers?per_page=15",
                                        body: nil, headers: operatorKey), [baseURL]))
}
if !postgresInstances.isEmpty {
    scenarios.append((.writes, Scenario(name: "POST respond, PostgreSQL, one instance", method: .POST, path: respond, body: spreadRespondBody, headers: key),
                      [postgresInstances[0].baseURL]))
    scenarios.append((.writes, Scenario(name: "POST respond, PostgreSQL, two instances", method: .POST, path: respond, body: spreadRespondBody, headers: key),
                      postgresInstances.map(\.baseURL)))
}

var configuration = HTTPClient.Configuration()
configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

print("SaveDesk bench · \(machine()) · \(concurrency) concurrent clients · \(runs) runs of \(Int(seconds)) s each")
print(MachineCheck.report(directory: directory, when: "before the first row"))
if let importFigure { print(importFigure) }
/// Each scenario's median run (req/s, p99 ms) and median CPU per request, by name, for the goals.
var measured: [String: (throughput: Double, p99: Double, cpuMs: Double)] = [:]
/// The table's goals, each next to its figure.
@MainActor func printGoals() {
    func met(_ yes: Bool) -> String { yes ? "met" : "NOT met" }
    if let bare = measured[scenarios[0].1.name], let config = measured[scenarios[1].1.name] {
        let ratio = config.throughput / bare.throughput
        print(String(format: "goal: GET cancel-flow at ≥ 0.8× bare Hummingbird: %.2f× (%@); by CPU per request (client included): %.2f×",
                     ratio, met(ratio >= 0.8), bare.cpuMs / config.cpuMs))
    }
    if let full = measured["POST cancel-flow/respond (synchronous=FULL)"] {
        print(String(format: "goal: durable mutation, SQLite FULL, ≥ 1,500 req/s and p99 ≤ 20 ms: %.0f req/s, p99 %.1f ms (%@)",
                     full.throughput, full.p99, met(full.throughput >= 1_500 && full.p99 <= 20)))
    }
    if let one = measured["POST respond, PostgreSQL, one instance"], let two = measured["POST respond, PostgreSQL, two instances"] {
        print(String(format: "goal: durable mutation, PostgreSQL one instance, ≥ 800 req/s and p99 ≤ 50 ms: %.0f req/s, p99 %.1f ms (%@)",
                     one.throughput, one.p99, met(one.throughput >= 800 && one.p99 <= 50)))
        print(String(format: "two instances: %.2f× one (the database, both servers and the load share this machine's %d cores)",
                     two.throughput / one.throughput, ProcessInfo.processInfo.activeProcessorCount))
    }
    for (label, _) in searchServers {
        let rows = measured.filter { $0.key.hasPrefix("GET customers?query=") && $0.key.hasSuffix("(\(label))") }
        guard let worst = rows.max(by: { $0.value.p99 < $1.value.p99 }) else { continue }
        print(String(format: "goal: search p99 ≤ 15 ms for any query at %@: worst %.1f ms, %@ (%@)", label, worst.value.p99, worst.key,
                     met(worst.value.p99 <= 15)))
    }
}
print("scenario".padding(toLength: 44, withPad: " ", startingAt: 0) + "  req/s median (min–max)      p50 ms   p99 ms  failures  CPU ms/req  machine ms/req")
/// The scenarios in the order they run: GET cancel-flow and its anchor, the bare route, as one
/// group whose runs alternate (bare, SaveDesk, bare, …), so a stretch of time when this shared
/// machine's neighbours take its cores falls on both sides of the ratio, not on one; every other
/// scenario alone.
let chosen = scenarios.filter { parts.contains($0.0) }
let anchored = chosen.filter { $0.0 == .http }
let groups = (anchored.isEmpty ? [] : [anchored]) + chosen.filter { $0.0 != .http }.map { [$0] }
for group in groups {
    for (_, scenario, baseURLs) in group {
        _ = await run(Scenario(name: "", method: scenario.method, path: scenario.path, body: scenario.body, headers: scenario.headers),
                      baseURLs: baseURLs, client: client)  // warm-up
    }
    var resultsOfGroup = Array(repeating: [RunResult](), count: group.count)
    for _ in 0..<runs {
        for (index, (_, scenario, baseURLs)) in group.enumerated() {
            resultsOfGroup[index].append(await run(scenario, baseURLs: baseURLs, client: client))
        }
    }
    for ((_, scenario, _), results) in zip(group, resultsOfGroup) {
        let throughputs = results.map(\.throughput).sorted()
        let median = results.sorted { $0.throughput < $1.throughput }[results.count / 2]
        let cpu = results.map(\.cpuPerRequestMs).sorted()[results.count / 2]
        let machineCPU = results.map(\.machinePerRequestMs).sorted()[results.count / 2]
        let line = scenario.name.padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(format: "  %8.0f (%6.0f–%6.0f)   %7.2f  %7.2f  %8d  %10.3f  %14.3f", throughputs[throughputs.count / 2], throughputs.first!,
                     throughputs.last!, median.percentile(0.5), median.percentile(0.99), results.map(\.failures).reduce(0, +), cpu, machineCPU)
        print(line)
        measured[scenario.name] = (throughputs[throughputs.count / 2], median.percentile(0.99), cpu)
    }
}
printGoals()
if parts.contains(.writes), let postgresURL, let first = postgresInstances.first {
    await WritesBench.statements(postgresURL: postgresURL, baseURL: first.baseURL, body: spreadRespondBody, key: key[0].1, client: client)
}
// The event stream: 200 subscribers, fan-out from commit to the last of them, and the durable
// write with them and without (goal: within 10 %). On PostgreSQL the subscribers are spread over
// both instances and the writes go to one: half the fan-out crosses instances (LISTEN/NOTIFY).
if parts.contains(.events) {
    let subscribers = argument("--subscribers", default: 200)
    await EventsBench.report(
        label: "SQLite (synchronous=FULL)", writeURLs: [savedesk.baseURL], subscribeURLs: [savedesk.baseURL],
        appKey: "pk_test_savedesk_demo_app_0001", operatorKey: "sk_test_savedesk_demo_marco_0001",
        writes: Scenario(name: "POST cancel-flow/respond", method: .POST, path: "/v1/iap/cancel-flow/respond", body: respondBody, headers: key),
        subscribers: subscribers, runs: runs, client: client
    )
    if postgresInstances.count == 2 {
        await EventsBench.report(
            label: "PostgreSQL, writes to one instance, subscribers on both", writeURLs: [postgresInstances[0].baseURL],
            subscribeURLs: postgresInstances.map(\.baseURL), appKey: "pk_test_savedesk_demo_app_0001", operatorKey: "sk_test_savedesk_demo_marco_0001",
            writes: Scenario(name: "POST respond", method: .POST, path: "/v1/iap/cancel-flow/respond", body: spreadRespondBody, headers: key),
            subscribers: subscribers, runs: runs, client: client
        )
    }
}
// Apple's cancel page: answers within its deadline, ten and fifty in flight.
if parts.contains(.retention) {
    try await RetentionBench.report(baseURL: savedesk.baseURL, operatorKey: "sk_test_savedesk_demo_marco_0001", client: client, runs: runs)
}
if parts.contains(.hostile) {
    let hostileDatabase = directory.appendingPathComponent("bench-hostile.sqlite").path
    _ = try await DemoSeed.apply(file: seedPath, config: limitedConfig, databasePath: hostileDatabase)
    let hostile = try await SaveDeskBackend.start(config: limitedConfig, databasePath: hostileDatabase)
    await HostileBench.report(baseURL: hostile.baseURL, port: hostile.port, key: "pk_test_savedesk_demo_app_0001", client: client,
                              seconds: seconds, runs: runs)
    await hostile.stop()
}
// The cancel-flow funnel over ten million generated responses over 90 days (goal: ≤ 10 ms for any
// range), on each engine: the real analytics endpoint, all time, one operator, and ranges whose
// ends fall mid-day and mid-hour.
let funnelCount = !parts.contains(.funnel) ? 0 : argument("--funnel-responses", default: 10_000_000)
if funnelCount > 0 {
    var engines = [("SQLite", database, savedesk.baseURL)]
    if let postgresURL, let first = postgresInstances.first { engines.append(("PostgreSQL", postgresURL, first.baseURL)) }
    for (engine, location, baseURL) in engines {
        let generated = ContinuousClock.now
        let store = try await Store.open(path: location, logger: Logger(label: "bench"))
        try await store.loadGeneratedResponses(count: funnelCount, days: 90, customers: FunnelBench.customers)
        await store.close()
        print("\ncancel-flow funnel, \(engine), over \(funnelCount) generated responses (written in \(ContinuousClock.now - generated))")
        func at(_ secondsAgo: Double) -> String { ISO8601DateFormatter().string(from: Date().addingTimeInterval(-secondsAgo)) }
        // Ranges whose ends fall mid-day and mid-hour: whole days, whole hours and partial hours.
        for (name, query) in [("all time", ""), ("one operator", "?operator=Marco%20(support)"), ("last 30 days", "?from=\(at(30 * 86_400))"),
                              ("7 days ending 5 h 17 min ago", "?from=\(at(7 * 86_400 + 19_020))&to=\(at(19_020))"),
                              ("last 90 minutes", "?from=\(at(5_400))")] {
            var times: [Double] = []
            for _ in 0..<(runs * 4 + 1) {
                times.append(try await FunnelBench.time(baseURL + "/v1/desk/analytics/cancel-flow" + query, key: "sk_test_savedesk_demo_marco_0001", client: client))
            }
            let measured = Array(times.dropFirst()).sorted()  // the first run warms the caches
            print(name.padding(toLength: 44, withPad: " ", startingAt: 0)
                + String(format: "  %8.1f ms median (%.1f–%.1f, p90 %.1f; goal ≤ 10 ms for any range)", measured[measured.count / 2],
                         measured.first!, measured.last!, measured[Int(Double(measured.count) * 0.9)]))
        }
    }
}
// The terminal UI, against this process's server (the savedesk binary is built next to this one).
let savedeskBinary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("savedesk").path
let benchmarks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let operatorServer = ["--server", savedesk.baseURL, "--key", "sk_test_savedesk_demo_marco_0001"]
/// The peers `make bench-tui` passes: `--textual-python`, `--bubbletea` and `--tui-rs` (binaries).
let peers: [TUIBench.Subject] = [
    stringArgument("--textual-python").map {
        TUIBench.Subject(name: TUIBench.Peer.textual, argv: [$0, benchmarks.appendingPathComponent("textual/customers.py").path] + operatorServer)
    },
    stringArgument("--bubbletea").map { TUIBench.Subject(name: TUIBench.Peer.bubbleTea, argv: [$0] + operatorServer) },
    stringArgument("--tui-rs").map { TUIBench.Subject(name: TUIBench.Peer.tuiRS, argv: [$0] + operatorServer) },
].compactMap { $0 }
if !parts.contains(.tui) {
    // not asked for
} else if FileManager.default.isExecutableFile(atPath: savedeskBinary) {
    TUIBench.report(binary: savedeskBinary, peers: peers, server: savedesk.baseURL, key: "sk_test_savedesk_demo_marco_0001")
} else {
    print("\nterminal UI: \(savedeskBinary) is missing (make bench builds it)")
}
print("\n" + MachineCheck.report(directory: directory, when: "after the last row"))
// Its databases take gigabytes (ten million responses); the servers go with the process.
try? FileManager.default.removeItem(at: directory)
