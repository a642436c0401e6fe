import Foundation
import RetentionDomain
import SaveDeskAPI

/// A subscriber's items as a `text/event-stream` body, encoded as the HTTP writer asks for them
/// (pulled, so nothing queues here: what waits is in the hub's bounded queue).
struct EventStreamBody: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let subscription: EventHub.Subscription

    /// How long a client waits before it reconnects, and a first line so it knows it is subscribed.
    static let prelude = Array("retry: 2000\n: subscribed\n\n".utf8)

    struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: EventHub.Subscription
        var live: AsyncStream<EventHub.Item>.AsyncIterator
        var opened = false
        var sentThrough: Int64

        init(_ subscription: EventHub.Subscription) {
            self.subscription = subscription
            live = subscription.live.makeAsyncIterator()
            sentThrough = subscription.sentThrough
        }

        /// The prelude and what comes `first`, in one piece; then each live item as it comes.
        mutating func next() async -> ArraySlice<UInt8>? {
            if !opened {
                opened = true
                var bytes = EventStreamBody.prelude
                for item in subscription.first { bytes += EventStreamBody.encode(item).utf8 }
                return bytes[...]
            }
            if subscription.endsAfterFirst {
                subscription.finish()
                return nil
            }
            while true {
                guard let item = await live.next() else { return nil }
                if case .batch(let through, let bytes) = item {
                    guard through > sentThrough else { continue }
                    sentThrough = through
                    return bytes[...]
                }
                return ArraySlice(EventStreamBody.encode(item).utf8)
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription) }

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
