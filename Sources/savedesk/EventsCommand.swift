import ArgumentParser
import Foundation
import RetentionDomain
import SaveDeskClient

/// `savedesk events tail`: the desk's event stream on a terminal or for a script, as
/// `stripe listen` prints its events: one line per event (JSON Lines with --json), reconnecting
/// with backoff and resuming where it left off.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "The server's live events (every recorded change, and who is on a customer).",
        subcommands: [Tail.self]
    )

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tail", abstract: "Print events as they happen; reconnects and resumes until interrupted.",
            discussion: "Exit codes: 0 after --count events, 1 an error, 4 a refused key, 130 interrupted."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this customer's events.") var customer: String?
        @Option(help: "Resume after this event id (what the last line printed).") var after: Int64?
        @Option(help: "Stop after this many events (for scripts).") var count: Int?

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be at least 1") }
            if let after, after < 0 { throw ValidationError("--after must be an event id (0 or more)") }
        }

        func run() async throws {
            let output = Output(json: global.json)
            let settings: CLISettings
            do { settings = try CLISettings.resolve(global) } catch {
                output.message("error: \(error.message)")
                throw ExitCode(error.code.rawValue)
            }
            let feed = DeskEventFeed(serverURL: settings.serverURL, key: settings.key, customerId: customer, after: after)
            let (updates, continuation) = AsyncStream<Update>.makeStream()
            feed.start { continuation.yield(.state($0)) } message: { continuation.yield(.message($0)) }
            defer { feed.stop() }
            var printed = 0
            for await update in updates {
                switch update {
                case .state(.live): output.message("listening for events on \(settings.serverURL.absoluteString)")
                case .state(.reconnecting(let seconds, let reason)): output.message("lost the stream (\(reason)); reconnecting in \(seconds) s")
                case .state(.stopped(let reason)):
                    output.message("error: \(reason)")
                    throw ExitCode(CLIError.Code.failure.rawValue)
                case .state(.refused(let error)):
                    let mapped = CLIError(error)
                    output.message("error: \(mapped.message)")
                    throw ExitCode(mapped.code.rawValue)
                case .state(.connecting): break
                case .message(let message):
                    if global.json {
                        // JSON Lines: one compact object per line, flushed as it comes.
                        FileHandle.standardOutput.write(Data((Self.json(message) + "\n").utf8))
                    } else {
                        output.line(Self.text(message))
                    }
                    if case .event = message {
                        printed += 1
                        if let count, printed >= count { return }
                    }
                }
            }
        }

        enum Update: Sendable {
            case state(DeskEventFeed.State)
            case message(DeskStreamMessage)
        }

        /// `2026-11-25T15:02:11Z  #42  cus_ava  Marco (support) paused the subscription  (subscription.pause)`.
        static func text(_ message: DeskStreamMessage) -> String {
            switch message {
            case .event(let event):
                return "\(WireFormat.formatDate(event.at))  #\(event.id)  \(event.customerId)  "
                    + "\(DeskEvents.sentence(actor: event.actor, type: event._type))  (\(event._type))"
            case .presence(let presence):
                let activity = DeskEvents.Activity(rawValue: presence.activity.rawValue) ?? .viewing
                let said = activity == .left ? "\(presence._operator) left" : DeskEvents.presence(operatorName: presence._operator, activity: activity)
                return "presence  \(presence.customerId)  \(said)"
            case .gap(let after, let through):
                return "gap  events after #\(after) up to #\(through) were purged before this resume; going on after #\(through)"
            }
        }

        /// One JSON object per line: the event's data, with `event` naming its kind.
        static func json(_ message: DeskStreamMessage) -> String {
            struct Line<Body: Encodable>: Encodable {
                var event: String
                var data: Body
            }
            let encoder = WireFormat.encoder()
            let encoded: Data?
            switch message {
            case .event(let event): encoded = try? encoder.encode(Line(event: event._type, data: event))
            case .presence(let presence): encoded = try? encoder.encode(Line(event: "presence", data: presence))
            case .gap(let after, let through): encoded = try? encoder.encode(Line(event: "gap", data: ["after": after, "through": through]))
            }
            return encoded.map { String(decoding: $0, as: UTF8.self) } ?? "null"
        }
    }
}
