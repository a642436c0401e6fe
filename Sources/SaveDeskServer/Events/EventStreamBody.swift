import Foundation
import RetentionDomain
import SaveDeskAPI

/// A subscriber's items as a `text/event-stream` body, encoded as the HTTP writer asks for them
/// (pulled, so nothing queues here: what waits is in the hub's bounded queue).
struct EventStreamBody: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let items: AsyncStream<EventHub.Item>

    /// How long a client waits before it reconnects, and a first line so it knows it is subscribed.
    static let prelude = Array("retry: 2000\n: subscribed\n\n".utf8)

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<EventHub.Item>.AsyncIterator
        var opened = false

        mutating func next() async -> ArraySlice<UInt8>? {
            if !opened {
                opened = true
                return EventStreamBody.prelude[...]
            }
            guard let item = await base.next() else { return nil }
            if case .batch(_, let bytes) = item { return bytes[...] }
            return ArraySlice(EventStreamBody.encode(item).utf8)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: items.makeAsyncIterator()) }

    /// One item as its lines (each ends with a blank line).
    static func encode(_ item: EventHub.Item) -> String {
        switch item {
        case .heartbeat:
            return ": heartbeat\n\n"
        case .batch(_, let bytes):
            return String(decoding: bytes, as: UTF8.self)
        case .event(let event):
            let data = json(Components.Schemas.DeskEvent(
                id: event.id, _type: event.type, customerId: event.customerId, actor: event.actor,
                at: Date(unixSeconds: event.at), livemode: event.livemode, requestId: event.requestId
            ))
            return "id: \(event.id)\nevent: \(field(event.type))\ndata: \(data)\n\n"
        case .presence(let presence):
            let data = json(Components.Schemas.DeskPresence(
                customerId: presence.customerId, _operator: presence.operatorName, session: presence.session,
                activity: .init(rawValue: presence.activity) ?? .viewing, expiresAt: Date(unixSeconds: presence.expiresAt)
            ))
            return "event: presence\ndata: \(data)\n\n"
        case .gap(let after, let through):
            return "event: gap\ndata: \(json(Components.Schemas.DeskEventGap(after: after, through: through)))\n\n"
        }
    }

    private static let encoder = WireFormat.encoder()

    private static func json(_ value: some Encodable) -> String {
        // JSON without pretty printing has no line breaks: one data line.
        (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }

    /// A field value on one line (the server names its types, but a line break must never split one).
    private static func field(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != "\n" && $0 != "\r" })
    }
}
