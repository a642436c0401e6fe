/// Where a view model's data is: being fetched, in, or not (with the sentence to show). The
/// screens draw the first and the last the same way (`LoadPhaseView`).
public enum LoadPhase: Hashable, Sendable {
    case loading
    case loaded
    case failed(String)
}
