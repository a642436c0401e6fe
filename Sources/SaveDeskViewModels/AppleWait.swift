import Foundation
import Observation
import RetentionDomain
import SaveDeskClient

/// Apple's side after a cancel flow ended: only the customer can turn off App Store renewal, so
/// SaveDesk waits for the App Store to report it. Either a cancellation read out (confirmed when
/// Apple reports renewal off) or a paid switch to the web (completed when Apple's renewal is off).
/// `check()` asks again; it is safe to call any number of times.
@MainActor @Observable
public final class AppleWait {
    /// Where Apple's side stands.
    public enum Side: Hashable, Sendable {
        /// A switch was paid: Apple still renews until the customer turns it off in Settings.
        case switchWaiting
        /// Switched, and Apple's renewal is off: completed.
        case switchCompleted
        /// The cancellation steps were read out; Apple has not reported renewal off yet.
        case cancellationWaiting(readOutAt: Date)
        /// Apple reported renewal off.
        case cancellationConfirmed(readOutAt: Date, confirmedAt: Date)

        public var isWaiting: Bool {
            switch self {
            case .switchWaiting, .cancellationWaiting: true
            case .switchCompleted, .cancellationConfirmed: false
            }
        }
    }

    /// The cancellation read out (nil for a switch).
    public private(set) var cancellation: Wire.AppStoreCancellation?
    /// The last check's news, as a sentence (nothing new yet, or why the check failed).
    public private(set) var message: String?

    @ObservationIgnored private let manager: MigrationManager?
    @ObservationIgnored private let customer: (@MainActor () async throws(SaveDeskClientError) -> Wire.CustomerDetail)?

    /// Waits for Apple to confirm `cancellation`; `customer` reads the customer again.
    public init(cancellation: Wire.AppStoreCancellation, customer: @escaping @MainActor () async throws(SaveDeskClientError) -> Wire.CustomerDetail) {
        self.cancellation = cancellation
        manager = nil
        self.customer = customer
    }

    /// Waits for Apple's renewal of a paid switch to be turned off.
    public init(switchOf manager: MigrationManager) {
        cancellation = nil
        self.manager = manager
        customer = nil
    }

    public var side: Side? {
        if let cancellation {
            if let confirmed = cancellation.confirmedAt { return .cancellationConfirmed(readOutAt: cancellation.readOutAt, confirmedAt: confirmed) }
            return .cancellationWaiting(readOutAt: cancellation.readOutAt)
        }
        switch manager?.state {
        case .accepted?: return .switchWaiting
        case .completed?: return .switchCompleted
        default: return nil
        }
    }

    /// Asks the server what Apple reports.
    public func check() async {
        if let cancellation, let customer {
            do {
                let detail = try await customer()
                self.cancellation = detail.retention.appStoreCancellations.first { $0.id == cancellation.id } ?? cancellation
                message = self.cancellation?.confirmedAt == nil ? CancelFlow.AgentCopy.appleHasNotConfirmed : nil
            } catch {
                message = error.message
            }
        } else if let manager, manager.state == .accepted {
            await manager.showAppleSubscriptionManagement()
            message = manager.checkoutError ?? (manager.waitingForAppleCancel ? CancelFlow.AgentCopy.appleStillRenews : nil)
        }
    }
}
