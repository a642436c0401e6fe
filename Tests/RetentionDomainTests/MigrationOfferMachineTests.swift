import Testing

@testable import RetentionDomain

@Suite("Switch-and-save state machine")
struct MigrationOfferMachineTests {
    typealias State = MigrationOffer.State

    /// Expected result of every user action in every state; nil = IllegalTransition.
    /// Columns: present, checkoutSucceeded, appleRenewalOff, productUnavailable, dismiss, resetDismissal.
    static let actions: [MigrationOffer.Event] = [
        .present, .checkoutSucceeded, .appleRenewalOff, .productUnavailable, .dismiss, .resetDismissal,
    ]
    static let actionTable: [State: [State?]] = [
        .loading: [nil, nil, nil, nil, .dismissed, .loading],
        .ineligible: [nil, nil, nil, nil, .dismissed, .ineligible],
        .eligible: [.presented, nil, nil, .ineligible, .dismissed, .eligible],
        .presented: [.presented, .accepted, nil, .ineligible, .dismissed, .presented],
        .accepted: [nil, nil, .completed, nil, .dismissed, .accepted],
        .completed: [nil, nil, nil, nil, .dismissed, .completed],
        .dismissed: [nil, nil, nil, nil, .dismissed, .loading],
    ]

    static var actionPairs: [(State, MigrationOffer.Event, State?)] {
        State.allCases.flatMap { state in
            zip(actions, actionTable[state]!).map { (state, $0, $1) }
        }
    }

    @Test(arguments: actionPairs)
    func userAction(from state: State, event: MigrationOffer.Event, expected: State?) throws {
        if let expected {
            #expect(try MigrationOffer.transition(from: state, on: event) == expected)
        } else {
            #expect(throws: MigrationOffer.IllegalTransition(from: state, event: event)) {
                try MigrationOffer.transition(from: state, on: event)
            }
        }
    }

    /// Re-evaluation moves unlocked states to the evaluated state and leaves locked ones alone.
    static let unlocked: Set<State> = [.loading, .ineligible, .eligible]

    @Test(arguments: State.allCases, State.allCases)
    func evaluation(from state: State, result: State) throws {
        let next = try MigrationOffer.transition(from: state, on: .evaluated(result))
        #expect(next == (Self.unlocked.contains(state) ? result : state))
    }

    @Test func everyPairIsCovered() {
        #expect(Self.actionPairs.count + State.allCases.count * State.allCases.count
            == State.allCases.count * MigrationOffer.Event.allCases.count)
    }

    @Test func lockedStatesAreTheMidFlowOnes() {
        #expect(State.allCases.filter(\.isLocked) == [.presented, .accepted, .completed, .dismissed])
        #expect(State.allCases.filter(\.carriesOfferData) == [.eligible, .presented, .accepted, .completed])
    }

    @Test func happyPathWalksToCompleted() throws {
        var state = State.loading
        for event: MigrationOffer.Event in [.evaluated(.eligible), .present, .checkoutSucceeded, .appleRenewalOff] {
            state = try MigrationOffer.transition(from: state, on: event)
        }
        #expect(state == .completed)
    }

    @Test func illegalTransitionNamesStateAndEvent() {
        let error = MigrationOffer.IllegalTransition(from: .eligible, event: .checkoutSucceeded)
        #expect(error.description == "checkoutSucceeded is not possible while the offer is eligible")
    }
}
