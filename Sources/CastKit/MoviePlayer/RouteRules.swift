/// Where a loaded movie plays, and how it gets back to a receiver it lost: CastKit's route rules as a pure state
/// machine with time as an input (in the style of `SessionRules` and `ReceiverConnectionStateMachine`).
///
/// The player tells it what happened (a playback started, the selection changed, a receiver was lost or its
/// connection broke, a retry fell due, the clock of a playback runs) and carries out the step it returns: starting a
/// playback on a route at the movie's position, or arming a timer for a retry. `RouteRulesTests` drives every rule
/// without a receiver, a socket or a clock.
///
/// The rules:
/// - A movie plays on the candidate route (the selected receiver, when `allowsAirPlay` and the receiver can play this
///   player's media), unless that receiver is the one that failed: playback stays here until the selection or
///   `allowsAirPlay` changes.
/// - A receiver that refuses the movie, or cannot be reached, is lost at once: playback comes here at its position.
/// - A connection that breaks without a finish (castd restarting, its host gone a moment) is retried on the same
///   receiver, insisting on the key it presented, every `interval` until `window` has passed since the break; the
///   first playback whose clock runs ends the retries. After the window, the receiver is lost.
/// - Any start that is not a retry (a move, a new movie, a replay) ends a reconnection in progress.
/// - A playback on a group (several receivers in step) stays one while the selection changes: it takes the new
///   route's receivers in place, adding and removing members while it plays, as long as a group can take them (Cast
///   receivers, and only Cast receivers play in it); a route it cannot take, or here, replaces it. A group left with
///   one receiver is still a group (the next receiver selected joins it); one receiver playing alone becomes a group
///   by a move.
///
/// `Route` is the selected receivers (`[ReceiverDescription]`) in the player; tests use a value of their own.
///
/// Thread-safety: a value; the player keeps it under its lock.
struct RouteRules<Route: GroupableRoute>: Equatable {
    /// How a broken connection is retried.
    struct Policy: Equatable {
        var interval: Duration = .milliseconds(500)
        var window: Duration = .seconds(5)
    }

    /// A reconnection in progress: the receiver that was lost, the key it presented, and when to give up on it.
    struct Reconnection: Equatable {
        var route: Route
        var receiverID: String
        var deadline: Duration
    }

    /// What the player does next.
    enum Step: Equatable {
        /// Nothing changes.
        case none
        /// Replace the playback (if any) by one on `route` (nil: this machine) at the movie's position, in its
        /// intended state. `pinnedID`: a reconnection, which must find the receiver that presented this key.
        case start(on: Route?, pinnedID: String?)
        /// The connection broke: show the movie interrupted at its position, then start a reconnection (as `start`).
        case interruptAndReconnect(on: Route, pinnedID: String)
        /// Call `retryDue` at `at` (a timer; the player keeps its generation to drop a retry that was overtaken).
        case retry(at: Duration)
        /// Keep the group playback and make its members `route`'s receivers (add the new ones, remove the others)
        /// while it plays; then `regrouped(on:)`.
        case regroup(on: Route)
        /// Keep what plays alone on the active receiver, which plays on, and make it a group of `route`'s receivers
        /// (the others join it in step); then `adopted(on:)`, or a `.start(on: route)` when it cannot be done.
        case adopt(on: Route)
    }

    var policy = Policy()
    /// Where the loaded playback runs: nil when no movie is loaded, `.some(nil)` here, `.some(route)` on a receiver.
    private(set) var active: Route??
    /// The receiver that failed; nil when none did since the selection last changed.
    private(set) var lost: Route?
    /// Retrying a receiver whose connection broke without a finish; nil otherwise.
    private(set) var reconnection: Reconnection?
    /// The playback runs as a group (started on a group route, kept through regroups).
    private(set) var grouped = false

    init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// Where the movie should play given the `candidate` route: nil (here) when there is none, or it is the one that
    /// failed.
    func wanted(candidate: Route?) -> Route? {
        guard let candidate, candidate != lost else { return nil }
        return candidate
    }

    /// The player started a playback on `route`; `reconnecting` when it is the start a `.start(pinnedID:)` or
    /// `.interruptAndReconnect` asked for with a pinned key.
    mutating func started(on route: Route?, reconnecting: Bool = false) {
        active = .some(route)
        grouped = route?.isGroup ?? false
        if !reconnecting { reconnection = nil }
    }

    /// The group playback took `route`'s receivers, as `.regroup` asked: it plays there now, still as a group.
    mutating func regrouped(on route: Route) {
        precondition(grouped, "only a group playback regroups")
        active = .some(route)
    }

    /// What played alone became a group playback of `route`, as `.adopt` asked: it plays there now, as a group.
    mutating func adopted(on route: Route) {
        precondition(!grouped, "only what plays alone is adopted")
        active = .some(route)
        grouped = true
    }

    /// The movie was unloaded or finished: no playback runs, nothing is retried.
    mutating func unloaded() {
        active = nil
        grouped = false
        reconnection = nil
    }

    /// The selection or `allowsAirPlay` changed: the failed receiver is forgotten, and a loaded movie moves if it
    /// should play elsewhere now.
    mutating func selectionChanged(candidate: Route?) -> Step {
        lost = nil
        return moveIfNeeded(candidate: candidate)
    }

    /// A loaded movie that plays elsewhere than it should moves there; a group takes the new receivers in place when
    /// it can.
    func moveIfNeeded(candidate: Route?) -> Step {
        guard let active else { return .none }
        let route = wanted(candidate: candidate)
        if active == route { return .none }
        // A group with a member it could not take while playing (an AirPlay speaker) cannot let it go in place either.
        if grouped, let route, route.canJoinGroup, active?.canJoinGroup ?? false { return .regroup(on: route) }
        // What plays alone plays on into a group, unless a reconnection to it is in progress (nothing plays then).
        if !grouped, reconnection == nil, let alone = active, alone.canBeAdopted, let route, route.isGroup,
            route.canJoinGroup, route.keeps(alone)
        {
            return .adopt(on: route)
        }
        return .start(on: route, pinnedID: nil)
    }

    /// The receiver could not be reached or refused the movie (or a reconnection attempt to it failed).
    mutating func routeLost(candidate: Route?, now: Duration) -> Step {
        if reconnection != nil { return attemptFailed(candidate: candidate, now: now) }
        return giveUp(candidate: candidate)
    }

    /// The connection to the receiver that played broke without a finish. `retries`: this player retries (a movie
    /// player does; an audio or music player comes here at once); `receiverID`: the key the receiver presented (nil
    /// for a route without one, an AirPlay speaker, which is not retried).
    mutating func connectionBroken(receiverID: String?, retries: Bool, candidate: Route?, now: Duration) -> Step {
        guard retries, let receiverID, case .some(.some(let route)) = active else {
            return giveUp(candidate: candidate)
        }
        // A reconnected session that broke before its clock ran is a failed attempt: the next waits its turn.
        if reconnection != nil { return attemptFailed(candidate: candidate, now: now) }
        reconnection = Reconnection(route: route, receiverID: receiverID, deadline: now + policy.window)
        return .interruptAndReconnect(on: route, pinnedID: receiverID)
    }

    /// A retry armed by `.retry(at:)` fell due.
    func retryDue() -> Step {
        guard let reconnection else { return .none }
        return .start(on: reconnection.route, pinnedID: reconnection.receiverID)
    }

    /// The clock of the playback runs (its first `playing`): a reconnection in progress succeeded.
    mutating func clockStarted() {
        reconnection = nil
    }

    /// An attempt failed: the next after the interval while the window lasts, else the receiver is lost.
    private mutating func attemptFailed(candidate: Route?, now: Duration) -> Step {
        guard let reconnection else { return giveUp(candidate: candidate) }
        let next = now + policy.interval
        guard next < reconnection.deadline else { return giveUp(candidate: candidate) }
        return .retry(at: next)
    }

    /// The receiver that played is lost: playback comes to where it should be now that it is excluded.
    private mutating func giveUp(candidate: Route?) -> Step {
        reconnection = nil
        if case .some(.some(let route)) = active { lost = route }
        // A group whose every member is gone is not taken back in place: whatever plays next starts afresh.
        grouped = false
        return moveIfNeeded(candidate: candidate)
    }
}

/// What the route rules need to know of a route beyond which one it is: whether it is played as a group.
protocol GroupableRoute: Equatable {
    /// Played by a group playback (several receivers in step) rather than by one receiver.
    var isGroup: Bool { get }
    /// Whether a group playback can take this route's receivers while it plays (Cast receivers can join one; an
    /// AirPlay speaker cannot).
    var canJoinGroup: Bool { get }
    /// Whether what plays alone on this route can become a group without stopping: one Cast receiver that tells where
    /// its playback is anchored (`Features.anchor`).
    var canBeAdopted: Bool { get }
    /// Whether this route's receivers include every one of `other`'s.
    func keeps(_ other: Self) -> Bool
}

/// The player's route: the selected receivers it plays on, in order.
extension Array: GroupableRoute where Element == ReceiverDescription {
    var isGroup: Bool { count > 1 }
    var canJoinGroup: Bool { !isEmpty && allSatisfy { $0.kind != .speaker } }
    /// Its features as discovered: a receiver named by address (no TXT record) is not known to have the anchor.
    var canBeAdopted: Bool {
        guard count == 1, let receiver = first, receiver.kind == .cast else { return false }
        return receiver.record?.features.contains(.anchor) ?? false
    }
    func keeps(_ other: Self) -> Bool { other.allSatisfy(contains) }
}
