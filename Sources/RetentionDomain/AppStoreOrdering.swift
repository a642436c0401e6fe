/// Which signed App Store data a subscription takes, by Apple's `signedDate` (milliseconds):
/// newer data is applied, older data never undoes newer. Data signed in the same millisecond as
/// what was last applied is applied when it says something different (two notifications can share
/// a millisecond: a renewal and a refund), the same again changes nothing, and a tie never undoes
/// a revocation: a refund is never lost to a renewal signed in its millisecond.
///
/// (A transaction signed *after* a refund, for the same transaction and without a revocation date,
/// does revive the subscription: it is newer signed data. Apple does not sign that.)
extension AppStore {
    public enum Ordering: Equatable, Sendable {
        /// Newer, or a tie that changes something: apply it.
        case apply
        /// A tie that says what was already applied: nothing to do.
        case same
        /// Older, or a tie that would undo a revocation: keep what is there.
        case stale

        /// - Parameters:
        ///   - signed: the incoming data's `signedDate` (Apple always sends one; none counts as 0).
        ///   - applied: the `signedDate` of what the subscription last applied, if anything.
        ///   - changes: whether applying it would change the subscription.
        ///   - undoesRevocation: whether the subscription is revoked and applying it would not keep it so.
        public static func decide(signed: Int64?, applied: Int64?, changes: Bool, undoesRevocation: Bool) -> Ordering {
            guard let applied else { return .apply }
            let signed = signed ?? 0
            if signed > applied { return .apply }
            if signed < applied { return .stale }
            if !changes { return .same }
            return undoesRevocation ? .stale : .apply
        }
    }
}
