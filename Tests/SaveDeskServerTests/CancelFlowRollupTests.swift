import Foundation
import Logging
import NIOCore
import SQLKit
import SaveDeskAPI
@testable import SaveDeskServer
import Synchronization
import Testing

/// The cancel-flow funnel reads daily rollups for whole days, hourly rollups for the whole hours
/// of the partial days at the ends of its range, five-minute rollups for the whole five minutes
/// of the partial hours, and rows only for the partial five minutes; whatever the range, it must
/// count what a hand count does.
@Suite("Cancel-flow rollups")
struct CancelFlowRollupTests {
    typealias Response = Components.Schemas.CancelFlowResponse
    typealias Analytics = Components.Schemas.CancelFlowAnalytics

    /// A response as submitted, with who submitted it and when.
    struct Submitted {
        var actor: String
        var at: Date
        var response: Response
    }

    /// A small deterministic generator, so a failure can be replayed.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static let actors = [(TestServer.appKey, "app"), (TestServer.operatorKey, "Marco (support)"),
                         ("sk_test_savedesk_demo_priya_0001", "Priya (support lead)")]

    /// A varied response, the key that submits it and its actor.
    static func response(_ index: Int, generator: inout Generator) -> (key: String, actor: String, response: Response) {
        let outcomes: [Response.OutcomePayload] = [.cancelled, .retained, .paused, .dismissed]
        let (key, actor) = actors[generator.next(actors.count)]
        let outcome = outcomes[generator.next(outcomes.count)]
        let pauseDays: Int? = outcome == .paused ? [7, 14, 30][generator.next(3)] : nil
        let text = generator.next(3) == 0 ? "reason \(index)" : nil
        var answers: [Components.Schemas.CancelFlowAnswer] = [.init(questionId: 1, selectedOptionId: 11 + generator.next(4))]
        if let text { answers.append(.init(questionId: 3, freeText: text)) }
        let response = Response(
            userId: ["cus_ava", "cus_ben", "cus_chloe", "cus_quinn"][generator.next(4)], productId: "premium_monthly",
            outcome: outcome, offerShown: generator.next(2) == 0, offerAccepted: outcome == .retained,
            pauseShown: outcome == .paused || generator.next(2) == 0, pauseAccepted: outcome == .paused,
            pauseDurationDays: pauseDays, lastStepSeen: 1 + generator.next(3),
            answers: answers
        )
        return (key, actor, response)
    }

    /// Submits `count` varied responses over about four days, at uneven times (or `spacing`
    /// seconds apart).
    static func submit(_ count: Int, to server: TestServer, generator: inout Generator, spacing: Double? = nil) async throws -> [Submitted] {
        var submitted: [Submitted] = []
        for index in 0..<count {
            server.clock.advance(by: spacing ?? Double(generator.next(8 * 3_600)))
            let (key, actor, response) = Self.response(index, generator: &generator)
            _ = try await server.client(key: key).submitCancelFlowResponse(body: .json(response)).ok
            submitted.append(Submitted(actor: actor, at: server.clock.now(), response: response))
        }
        return submitted
    }

    /// Folds the responses not yet rolled up, as the server's job does four times a second; returns how many.
    @discardableResult
    static func fold(_ server: TestServer) async throws -> Int {
        try await server.running.store.transaction(key: CancelFlowRollups.lockKey) { data in
            try await data.cancelFlow.foldUnrolled(livemode: false, first: .max) + data.cancelFlow.foldUnrolled(livemode: true, first: .max)
        }
    }

    /// Writes a varied response as a submission writes it (listed for the next fold), with no
    /// server running: for a store whose list a test controls.
    static func list(
        _ index: Int, id: String, at: Date, into repository: SQLCancelFlowResponseRepository, generator: inout Generator
    ) async throws -> Submitted {
        let (_, actor, response) = Self.response(index, generator: &generator)
        try await repository.insert(CancelFlowResponseRow(
            id: id, customerId: response.userId, productId: response.productId, outcome: response.outcome.rawValue,
            offerShown: response.offerShown, offerAccepted: response.offerAccepted, pauseShown: response.pauseShown,
            pauseAccepted: response.pauseAccepted, pauseDurationDays: response.pauseDurationDays, lastStepSeen: response.lastStepSeen,
            answers: response.answers.map { .init(questionId: $0.questionId, optionId: $0.selectedOptionId, freeText: $0.freeText) },
            answersJSON: "[]", variantId: nil, actor: actor, livemode: false, createdAt: Int64(at.timeIntervalSince1970)
        ))
        return Submitted(actor: actor, at: at, response: response)
    }

    static func unrolled(_ server: TestServer) async throws -> Int {
        try await server.running.store.exclusive { db in
            try await db.raw("SELECT count(*) AS n FROM cancel_flow_unrolled").first()?.decode(column: "n", as: Int.self) ?? -1
        }
    }

    /// What the funnel must say for `[from, to)` and `actor`, counted by hand.
    static func expectMatch(_ report: Analytics, _ submitted: [Submitted], from: Date?, to: Date?, actor: String?,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        let chosen = submitted.filter { item in
            let seconds = Int64(item.at.timeIntervalSince1970)
            return from.map { seconds >= Int64($0.timeIntervalSince1970) } ?? true
                && to.map { seconds < Int64($0.timeIntervalSince1970) } ?? true && actor.map { $0 == item.actor } ?? true
        }
        let responses = chosen.map(\.response)
        func count(_ outcome: Response.OutcomePayload) -> Int { responses.filter { $0.outcome == outcome }.count }
        let context = "from \(from.map { "\($0)" } ?? "-") to \(to.map { "\($0)" } ?? "-") actor \(actor ?? "-")"
        #expect(report.outcomes.total == responses.count, "\(context)", sourceLocation: sourceLocation)
        let outcomes: [Int] = [report.outcomes.cancelled, report.outcomes.retained, report.outcomes.paused, report.outcomes.dismissed]
        let countedOutcomes: [Int] = [count(.cancelled), count(.retained), count(.paused), count(.dismissed)]
        #expect(outcomes == countedOutcomes, "\(context)", sourceLocation: sourceLocation)
        let flags: [Int] = [report.offerShown, report.offerAccepted, report.pauseShown, report.pauseAccepted]
        let countedFlags: [Int] = [responses.filter { $0.offerShown }.count, responses.filter { $0.offerAccepted }.count,
                                   responses.filter { $0.pauseShown }.count, responses.filter { $0.pauseAccepted }.count]
        #expect(flags == countedFlags, "\(context)", sourceLocation: sourceLocation)
        func tally(_ values: [Int]) -> [String] {
            let counts = Dictionary(grouping: values, by: { $0 }).mapValues { $0.count }
            return counts.keys.sorted().map { "\($0):\(counts[$0] ?? 0)" }
        }
        let durations: [String] = report.pauseDurations.map { "\($0.key):\($0.count)" }
        #expect(durations == tally(responses.compactMap { $0.pauseDurationDays }), "\(context)", sourceLocation: sourceLocation)
        let steps: [String] = report.lastStepReached.map { "\($0.key):\($0.count)" }
        #expect(steps == tally(responses.map { $0.lastStepSeen }), "\(context)", sourceLocation: sourceLocation)
        let why = report.questions.first { $0.questionId == 1 }
        #expect(why?.answers.map(\.count) == (11...14).map { option in
            responses.filter { $0.answers.first?.selectedOptionId == option }.count
        }, "\(context)", sourceLocation: sourceLocation)
        #expect(report.questions.first { $0.questionId == 3 }?.freeTextCount == responses.filter { $0.answers.count == 2 }.count,
                "\(context)", sourceLocation: sourceLocation)
        let perActor = Dictionary(grouping: chosen, by: { $0.actor }).mapValues { $0.count }
        let expectedOperators = perActor.keys.sorted().map { "\($0):\(perActor[$0] ?? 0)" }
        let reportedOperators = report.operators.map { "\($0._operator):\($0.outcomes.total)" }
        #expect(reportedOperators == expectedOperators, "\(context)", sourceLocation: sourceLocation)
    }

    @Test func anyRangeCountsWhatAHandCountDoes() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        var generator = Generator(state: 20_261_123)
        // Half of the responses folded into the rollups, half still listed for the next fold.
        var submitted = try await Self.submit(20, to: server, generator: &generator)
        try await Self.fold(server)
        #expect(try await Self.unrolled(server) == 0)
        submitted += try await Self.submit(20, to: server, generator: &generator)
        let desk = server.desk
        let first = submitted[0].at.timeIntervalSince1970, last = submitted[submitted.count - 1].at.timeIntervalSince1970
        let midnight = Double(CancelFlowRollups.dayStart(Int64(first))) + 86_400
        // Open ends, exact midnights, ranges inside one day, and ranges across several.
        let open: Date? = nil
        var ranges: [(Date?, Date?)] = [(open, open), (Date(timeIntervalSince1970: midnight), open), (open, Date(timeIntervalSince1970: midnight)),
                                        (Date(timeIntervalSince1970: midnight), Date(timeIntervalSince1970: midnight + 86_400)),
                                        (Date(timeIntervalSince1970: midnight + 3_600), Date(timeIntervalSince1970: midnight + 7_200))]
        for _ in 0..<20 {
            let a = first - 3_600 + Double(generator.next(Int(last - first) + 7_200))
            let b = first - 3_600 + Double(generator.next(Int(last - first) + 7_200))
            guard a != b else { continue }
            ranges.append((Date(timeIntervalSince1970: min(a, b)), generator.next(4) == 0 ? open : Date(timeIntervalSince1970: max(a, b))))
        }
        for (from, to) in ranges {
            for actor in [nil, "Marco (support)", "app"] as [String?] {
                let report = try await desk.getCancelFlowAnalytics(query: .init(from: from, to: to, _operator: actor)).ok.body.json
                Self.expectMatch(report, submitted, from: from, to: to, actor: actor)
            }
        }
        // Every response folded: the same counts.
        try await Self.fold(server)
        #expect(try await Self.unrolled(server) == 0)
        for (from, to) in ranges {
            for actor in [nil, "Marco (support)"] as [String?] {
                let report = try await desk.getCancelFlowAnalytics(query: .init(from: from, to: to, _operator: actor)).ok.body.json
                Self.expectMatch(report, submitted, from: from, to: to, actor: actor)
            }
        }
    }

    @Test func wholeDaysAreReadFromTheDailyRollupsNotTheRows() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        var generator = Generator(state: 7)
        let submitted = try await Self.submit(20, to: server, generator: &generator)
        try await Self.fold(server)
        let midnight = Date(timeIntervalSince1970: Double(CancelFlowRollups.dayStart(Int64(submitted[0].at.timeIntervalSince1970)) + 86_400))
        let wholeDays = try await server.desk.getCancelFlowAnalytics(query: .init(from: midnight)).ok.body.json
        let partial = try await server.desk.getCancelFlowAnalytics(query: .init(from: midnight.addingTimeInterval(60))).ok.body.json
        #expect(wholeDays.outcomes.total > 0)
        // Without the rows, whole days still count in full; a range that starts a minute after
        // midnight loses only what its partial first five minutes read from the rows (the rest
        // of that day is whole hours and five minutes, read from their rollups).
        try await server.running.store.exclusive { db in
            try await db.delete(from: "cancel_flow_answers").run()
            try await db.delete(from: "cancel_flow_responses").run()
        }
        // (The free-text samples are quotes, read from the rows.)
        func withoutSamples(_ report: Analytics) -> Analytics {
            var report = report
            for index in report.questions.indices { report.questions[index].freeTextSamples = [] }
            return report
        }
        let withoutRows = try await server.desk.getCancelFlowAnalytics(query: .init(from: midnight)).ok.body.json
        #expect(withoutSamples(withoutRows) == withoutSamples(wholeDays))
        let afterwards = try await server.desk.getCancelFlowAnalytics(query: .init(from: midnight.addingTimeInterval(60))).ok.body.json
        let firstFive = submitted.filter { $0.at >= midnight.addingTimeInterval(60) && $0.at < midnight.addingTimeInterval(300) }.count
        #expect(afterwards.outcomes.total == partial.outcomes.total - firstFive)
    }

    @Test func wholeHoursOfAPartialDayAreReadFromTheHourlyRollups() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        var generator = Generator(state: 11)
        let submitted = try await Self.submit(30, to: server, generator: &generator)
        try await Self.fold(server)
        // A range from a whole hour in the middle of a day with responses after it that day, to
        // another whole hour some days later: partial days at both ends, all whole hours.
        let start = submitted[submitted.count / 3].at.timeIntervalSince1970
        let from = Date(timeIntervalSince1970: Double(CancelFlowRollups.start(Int64(start), 3_600) + 3_600))
        let to = Date(timeIntervalSince1970: Double(CancelFlowRollups.start(Int64(submitted[submitted.count - 2].at.timeIntervalSince1970), 3_600)))
        #expect(CancelFlowRollups.split(from: Int64(from.timeIntervalSince1970), to: Int64(to.timeIntervalSince1970)).rows.isEmpty)
        let hours = try await server.desk.getCancelFlowAnalytics(query: .init(from: from, to: to)).ok.body.json
        Self.expectMatch(hours, submitted, from: from, to: to, actor: nil)
        let partial = try await server.desk.getCancelFlowAnalytics(query: .init(from: from.addingTimeInterval(60), to: to)).ok.body.json
        #expect(hours.outcomes.total > 0)
        // Without the rows, whole hours still count in full; a range that starts a minute into
        // an hour loses only what its partial five minutes read from the rows.
        try await server.running.store.exclusive { db in
            try await db.delete(from: "cancel_flow_answers").run()
            try await db.delete(from: "cancel_flow_responses").run()
        }
        let withoutRows = try await server.desk.getCancelFlowAnalytics(query: .init(from: from, to: to)).ok.body.json
        #expect(withoutRows.outcomes == hours.outcomes)
        #expect(withoutRows.lastStepReached == hours.lastStepReached)
        #expect(withoutRows.questions.map { $0.answers.map(\.count) } == hours.questions.map { $0.answers.map(\.count) })
        let afterwards = try await server.desk.getCancelFlowAnalytics(query: .init(from: from.addingTimeInterval(60), to: to)).ok.body.json
        let firstFive = submitted.filter { $0.at >= from.addingTimeInterval(60) && $0.at < from.addingTimeInterval(300) }.count
        #expect(afterwards.outcomes.total == partial.outcomes.total - firstFive)
    }

    /// Responses every 100 s for about two hours, from the next whole hour (half of them folded
    /// by the test, the others by the server's job when it comes to them).
    static func minutes(_ server: TestServer, seed: UInt64) async throws -> [Submitted] {
        var generator = Generator(state: seed)
        let now = Int64(server.clock.now().timeIntervalSince1970)
        server.clock.set(Date(timeIntervalSince1970: Double(CancelFlowRollups.start(now, 3_600) + 3_600)))
        var submitted = try await Self.submit(40, to: server, generator: &generator, spacing: 100)
        try await Self.fold(server)
        submitted += try await Self.submit(40, to: server, generator: &generator, spacing: 100)
        return submitted
    }

    @Test func wholeFiveMinutesOfAPartialHourAreReadFromTheirRollups() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let submitted = try await Self.minutes(server, seed: 5)
        try await Self.fold(server)
        let hour = Double(CancelFlowRollups.start(Int64(submitted[0].at.timeIntervalSince1970), 3_600))
        // Inside one hour, and across the next one, from and to on whole five minutes.
        let ranges = [(hour + 600, hour + 2_400), (hour + 2_700, hour + 3_600 + 1_500)].map { (Date(timeIntervalSince1970: $0), Date(timeIntervalSince1970: $1)) }
        for (from, to) in ranges {
            #expect(CancelFlowRollups.split(from: Int64(from.timeIntervalSince1970), to: Int64(to.timeIntervalSince1970)).rows.isEmpty)
        }
        var before: [Analytics] = []
        for (from, to) in ranges {
            let report = try await server.desk.getCancelFlowAnalytics(query: .init(from: from, to: to)).ok.body.json
            Self.expectMatch(report, submitted, from: from, to: to, actor: nil)
            #expect(report.outcomes.total >= 10)
            before.append(report)
        }
        let (from, to) = ranges[0]
        let partial = try await server.desk.getCancelFlowAnalytics(query: .init(from: from.addingTimeInterval(60), to: to)).ok.body.json
        // Without the rows, whole five minutes still count in full; a range that starts a minute
        // into five loses only what those four minutes read from the rows.
        try await server.running.store.exclusive { db in
            try await db.delete(from: "cancel_flow_answers").run()
            try await db.delete(from: "cancel_flow_responses").run()
        }
        for ((from, to), report) in zip(ranges, before) {
            let withoutRows = try await server.desk.getCancelFlowAnalytics(query: .init(from: from, to: to)).ok.body.json
            #expect(withoutRows.outcomes == report.outcomes)
            #expect(withoutRows.lastStepReached == report.lastStepReached && withoutRows.pauseDurations == report.pauseDurations)
            #expect(withoutRows.questions.map { $0.answers.map(\.count) } == report.questions.map { $0.answers.map(\.count) })
            #expect(withoutRows.operators.map(\.outcomes) == report.operators.map(\.outcomes))
        }
        let afterwards = try await server.desk.getCancelFlowAnalytics(query: .init(from: from.addingTimeInterval(60), to: to)).ok.body.json
        let firstFour = submitted.filter { $0.at >= from.addingTimeInterval(60) && $0.at < from.addingTimeInterval(300) }.count
        #expect(firstFour > 0)
        #expect(afterwards.outcomes.total == partial.outcomes.total - firstFour)
    }

    @Test func aRangeOnFiveMinutesCountsEachResponseOnce() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let submitted = try await Self.minutes(server, seed: 8)
        let hour = Double(CancelFlowRollups.start(Int64(submitted[0].at.timeIntervalSince1970), 3_600))
        // Ranges of whole five minutes, of rows, and of both, for every actor and one.
        for (from, to) in [(hour + 600, hour + 3_600 + 1_500), (hour + 3_600 + 1_260, hour + 7_200 + 400), (hour + 50, hour + 7_200 - 50)] {
            for actor in [nil, "Marco (support)"] as [String?] {
                let range = (Date(timeIntervalSince1970: from), Date(timeIntervalSince1970: to))
                let report = try await server.desk.getCancelFlowAnalytics(query: .init(from: range.0, to: range.1, _operator: actor)).ok.body.json
                Self.expectMatch(report, submitted, from: range.0, to: range.1, actor: actor)
            }
        }
    }

    /// Whatever the range, the funnel is one statement: one round trip on PostgreSQL, and one
    /// snapshot on either engine (rollups, rows not folded yet and samples agree), the newest
    /// free-text answers included.
    @Test func theFunnelIsReadInOneStatementWhateverTheRange() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let submitted = try await Self.minutes(server, seed: 21)
        let hour = Double(CancelFlowRollups.start(Int64(submitted[0].at.timeIntervalSince1970), 3_600))
        let store = server.running.store
        for (from, to) in [(nil, nil), (hour + 50, hour + 7_200 - 50), (hour + 3_600 + 1_260, nil)] as [(Double?, Double?)] {
            let counting = try await store.sqlRead { db in
                let counting = CountingDatabase(db)
                let figures = try await SQLCancelFlowResponseRepository(db: counting, kind: store.kind).figures(
                    livemode: false, from: from.map(Int64.init), to: to.map(Int64.init), actor: nil, samplesOf: [1, 3], samples: 5
                )
                let inRange = submitted.filter { s in from.map { s.at.timeIntervalSince1970 >= $0 } ?? true && to.map { s.at.timeIntervalSince1970 < $0 } ?? true }
                #expect(figures.outcomes.values.flatMap(\.values).reduce(0, +) == inRange.count)
                let texts = inRange.reversed().compactMap { $0.response.answers.first { $0.questionId == 3 }?.freeText }
                #expect(figures.samples[3] == Array(texts.prefix(5)), "newest first")
                #expect(figures.samples[1] == nil, "question 1 has no free text")
                return counting
            }
            #expect(counting.statements == 1, "\(String(describing: from))–\(String(describing: to))")
        }
    }

    /// The samples of a question nobody wrote in are an empty range of the index of text answers
    /// (migration 18), not a scan of all its answers for none: at ten million responses that scan
    /// took seconds a request.
    @Test func theSamplesReadTheIndexOfTextAnswers() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let store = server.running.store
        let query = SQLCancelFlowResponseRepository.sampleQuery(questions: [1], livemode: false, span: (nil, nil), actor: nil, limit: 5)
        let plan = try await store.sqlRead { db -> String in
            guard store.kind == .postgres else {
                return try await db.raw("EXPLAIN QUERY PLAN " + query).all().map { try $0.decode(column: "detail", as: String.self) }.joined(separator: "\n")
            }
            // (The test's tables are tiny: without this PostgreSQL reads them whole either way.)
            try await db.raw("BEGIN").run()
            try await db.raw("SET LOCAL enable_seqscan = off").run()
            let lines = try await db.raw("EXPLAIN " + query).all().map { try $0.decode(column: "QUERY PLAN", as: String.self) }
            try await db.raw("ROLLBACK").run()
            return lines.joined(separator: "\n")
        }
        #expect(plan.contains("cancel_flow_answers_text"), "\(plan)")
    }

    /// A fold takes at most `first` listed responses (the job: `foldChunk` a transaction, so a
    /// long list does not hold the writer for all of it); folded in turns, each counts once.
    @Test func aListFoldedInTurnsCountsEachResponseOnce() async throws {
        let server = try await TestServer.start()
        let hour = Int64(server.clock.now().timeIntervalSince1970) / 3_600 * 3_600 + 3_600
        await server.stop()
        // Thirty responses listed, as a submission lists them, across hours and five minutes, with
        // no server running to fold them; some made at the same second (ties in the list's order).
        var generator = Generator(state: 29)
        var submitted: [Submitted] = []
        let turns = try await server.withStore { store in
            try await store.exclusive { db in
                let repository = SQLCancelFlowResponseRepository(db: db, kind: store.kind)
                for index in 0..<30 {
                    let at = Date(timeIntervalSince1970: Double(hour + Int64(index / 2) * 700))
                    submitted.append(try await Self.list(index, id: "cr_turn_\(index)", at: at, into: repository, generator: &generator))
                }
                let listed = try await db.raw("SELECT count(*) AS n FROM cancel_flow_unrolled WHERE livemode = \(bind: false)").first()?
                    .decode(column: "n", as: Int.self) ?? 0
                var turns: [Int] = []
                repeat {
                    turns.append(try await repository.foldUnrolled(livemode: false, first: 7))
                } while turns.last == 7
                return (listed: listed, turns: turns)
            }
        }
        #expect(turns.listed >= 30)
        #expect(turns.turns == Array(repeating: 7, count: turns.listed / 7) + [turns.listed % 7], "\(turns)")
        let restarted = try await TestServer.start(directory: server.directory, clock: server.clock, seed: false)
        defer { Task { await restarted.stop() } }
        #expect(try await Self.unrolled(restarted) == 0)
        let ranges = [(hour, hour + 15 * 700), (hour + 300, hour + 3_600 + 1_500), (hour + 3_600, hour + 3 * 3_600)].map {
            (Date(timeIntervalSince1970: Double($0)), Date(timeIntervalSince1970: Double($1)))
        }
        for (from, to) in ranges {
            for actor in [nil, "Marco (support)"] as [String?] {
                let report = try await restarted.desk.getCancelFlowAnalytics(query: .init(from: from, to: to, _operator: actor)).ok.body.json
                Self.expectMatch(report, submitted, from: from, to: to, actor: actor)
            }
        }
    }

    @Test func theFiveMinuteMigrationLeavesTheResponsesListedToTheFold() async throws {
        let server = try await TestServer.start()
        var submitted = try await Self.minutes(server, seed: 13)
        await server.stop()
        // The store as it was before migration 17, with twenty more responses listed for the next
        // fold (written as a submission writes them, with no server to fold them).
        var generator = Generator(state: 17)
        try await server.withStore { store in
            try await store.exclusive { db in
                try await db.raw("DROP TABLE cancel_flow_5min").run()
                try await db.raw("DROP TABLE cancel_flow_5min_counts").run()
                try await db.delete(from: "schema_migrations").where("version", .equal, 17).run()
                let repository = SQLCancelFlowResponseRepository(db: db, kind: store.kind)
                for index in 0..<20 {
                    let at = submitted[submitted.count - 1].at.addingTimeInterval(100)
                    submitted.append(try await Self.list(index, id: "cr_listed_\(index)", at: at, into: repository, generator: &generator))
                }
                let listed = try await db.raw("SELECT count(*) AS n FROM cancel_flow_unrolled").first()?.decode(column: "n", as: Int.self)
                #expect(listed ?? 0 >= 20)
            }
        }
        let restarted = try await TestServer.start(directory: server.directory, clock: server.clock, seed: false)
        defer { Task { await restarted.stop() } }
        // Folded or not yet, each response counts once.
        let hour = Double(CancelFlowRollups.start(Int64(submitted[0].at.timeIntervalSince1970), 3_600))
        let ranges = [(hour + 600, hour + 7_200 + 2_700), (hour + 3_600 + 300, hour + 7_200 + 1_200)].map {
            (Date(timeIntervalSince1970: $0), Date(timeIntervalSince1970: $1))
        }
        for (from, to) in ranges {
            let report = try await restarted.desk.getCancelFlowAnalytics(query: .init(from: from, to: to)).ok.body.json
            Self.expectMatch(report, submitted, from: from, to: to, actor: nil)
        }
        try await Self.fold(restarted)
        for (from, to) in ranges {
            let report = try await restarted.desk.getCancelFlowAnalytics(query: .init(from: from, to: to)).ok.body.json
            Self.expectMatch(report, submitted, from: from, to: to, actor: nil)
        }
    }

    @Test func aRangeSplitsIntoDaysHoursFiveMinutesAndRows() {
        let day: Int64 = 86_400, hour: Int64 = 3_600, minute: Int64 = 60
        func spans(_ split: (buckets: [(grain: CancelFlowRollups.Grain, span: CancelFlowRollups.Span)], rows: [CancelFlowRollups.Span]),
                   _ grain: CancelFlowRollups.Grain?) -> [[Int64?]] {
            grain.map { grain in split.buckets.filter { $0.grain == grain }.map { [$0.span.from, $0.span.to] } } ?? split.rows.map { [$0.from, $0.to] }
        }
        // 10:32 on day 1 to 05:17 on day 4: rows 10:32–10:35, five minutes 10:35–11:00, hours
        // 11:00–24:00, days 2 and 3, hours 00:00–05:00 of day 4, five minutes 05:00–05:15, rows
        // 05:15–05:17.
        let split = CancelFlowRollups.split(from: day + 10 * hour + 32 * minute, to: 4 * day + 5 * hour + 17 * minute)
        #expect(spans(split, .day) == [[2 * day, 4 * day]])
        #expect(spans(split, .hour) == [[day + 11 * hour, 2 * day], [4 * day, 4 * day + 5 * hour]])
        #expect(spans(split, .fiveMinutes) == [[day + 10 * hour + 35 * minute, day + 11 * hour], [4 * day + 5 * hour, 4 * day + 5 * hour + 15 * minute]])
        #expect(spans(split, nil) == [[day + 10 * hour + 32 * minute, day + 10 * hour + 35 * minute], [4 * day + 5 * hour + 15 * minute, 4 * day + 5 * hour + 17 * minute]])
        // Within five minutes: all rows. Open ends: no partial bucket there.
        let inside = CancelFlowRollups.split(from: day + 60, to: day + 120)
        #expect(inside.buckets.isEmpty && spans(inside, nil) == [[day + 60, day + 120]])
        let open = CancelFlowRollups.split(from: nil, to: 3 * day + hour + 5 * minute)
        #expect(spans(open, .day) == [[nil, 3 * day]] && spans(open, .hour) == [[3 * day, 3 * day + hour]])
        #expect(spans(open, .fiveMinutes) == [[3 * day + hour, 3 * day + hour + 5 * minute]] && open.rows.isEmpty)
    }

    @Test func theMigrationRollsUpResponsesStoredBeforeIt() async throws {
        let server = try await TestServer.start()
        var generator = Generator(state: 99)
        let submitted = try await Self.submit(25, to: server, generator: &generator)
        await server.stop()
        // The store as it was before migration 6: no rollups (and no list of responses to fold).
        try await server.withStore { store in
            try await store.exclusive { db in
                try await db.raw("DROP TABLE cancel_flow_daily").run()
                try await db.raw("DROP TABLE cancel_flow_daily_counts").run()
                try await db.raw("DROP TABLE cancel_flow_hourly").run()
                try await db.raw("DROP TABLE cancel_flow_hourly_counts").run()
                try await db.raw("DROP TABLE cancel_flow_5min").run()
                try await db.raw("DROP TABLE cancel_flow_5min_counts").run()
                try await db.raw("DROP TABLE cancel_flow_unrolled").run()
                try await db.raw("DROP INDEX cancel_flow_answers_response").run()
                // (and none of the later migrations either)
                for index in ["idempotency_records_mode", "portal_sessions_mode", "checkout_transactions_mode", "customers_ranked_listing", "customers_kind",
                              "customers_created_by", "customers_app_account_token", "app_store_links_customer", "appstore_notifications_waiting",
                              "cancel_flow_responses_customer", "cancel_flow_answers_text"] {
                    try await db.raw("DROP INDEX \(unsafeRaw: index)").run()
                }
                try await db.raw("DROP TABLE app_store_links").run()
                if store.kind == .postgres {
                    try await db.raw("DROP TRIGGER audit_events_desk_event ON audit_events").run()
                    try await db.raw("DROP FUNCTION desk_events_at_commit()").run()
                }
                try await db.raw("DROP TABLE desk_events").run()
                try await db.raw("DROP TABLE desk_event_horizon").run()
                try await db.raw("DROP TABLE retention_requests").run()
                try await db.raw("DROP INDEX subscriptions_provider").run()
                try await db.raw("DROP TABLE stripe_events").run()
                try await db.raw("DROP TABLE stripe_actions").run()
                for (table, column) in [("idempotency_records", "livemode"), ("portal_sessions", "livemode"), ("customers", "kind"),
                                        ("customers", "story"), ("customers", "list_rank"), ("customers", "created_by"),
                                        ("customers", "app_account_token"), ("customers", "billing_customer_id"),
                                        ("appstore_notifications", "signed_payload"), ("subscriptions", "provider_id"),
                                        ("subscriptions", "provider_synced_at")] {
                    try await db.raw("ALTER TABLE \(unsafeRaw: table) DROP COLUMN \(unsafeRaw: column)").run()
                }
                try await db.delete(from: "schema_migrations").where("version", .greaterThanOrEqual, 6).run()
            }
        }
        let restarted = try await TestServer.start(directory: server.directory, clock: server.clock, seed: false)
        defer { Task { await restarted.stop() } }
        let report = try await restarted.desk.getCancelFlowAnalytics(query: .init()).ok.body.json
        Self.expectMatch(report, submitted, from: nil, to: nil, actor: nil)
        let midnight = Date(timeIntervalSince1970: Double(CancelFlowRollups.dayStart(Int64(submitted[0].at.timeIntervalSince1970)) + 86_400))
        let marco = try await restarted.desk.getCancelFlowAnalytics(query: .init(from: midnight, _operator: "Marco (support)")).ok.body.json
        Self.expectMatch(marco, submitted, from: midnight, to: nil, actor: "Marco (support)")
    }
}

/// Passes statements through to `base`, counting them.
final class CountingDatabase: SQLDatabase {
    let base: any SQLDatabase
    private let count = Mutex(0)

    init(_ base: any SQLDatabase) { self.base = base }

    var statements: Int { count.withLock { $0 } }
    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { base.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        count.withLock { $0 += 1 }
        return base.execute(sql: query, onRow)
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        count.withLock { $0 += 1 }
        try await base.execute(sql: query, onRow)
    }
}
