import CastBase
import CastProtocol

/// The rules of a group (several members playing one file in step, docs/multiroom.md) as a pure state machine with
/// time as an input, in the style of `SessionRules`, `SenderConnectionStateMachine` and `RouteRules`.
///
/// The driver (`GroupPlayback`) tells it what happened: a member's event, a time reply, a member lost or found, a
/// control from the program, a join asked for, a tick of its one timer. The machine returns the actions to carry out
/// (send a control to a member, ask a member's time, load the media on a joining member, look for a receiver, deliver
/// an event, announce a member change, complete a control, end the group); it reads no clock and does no I/O, so
/// `GroupRulesTests` drives every rule in milliseconds. Members are numbered in the order they arrive; a number is
/// never reused.
///
/// The rules:
/// - Nothing starts on a member's own: each loads paused (or seeks while paused) and says so; when every member is
///   ready, each is told to resume at one instant of the group's clock (ours), `startMargin` ahead (more for a member
///   that buffers more: an AirPlay speaker, whose first start after its set-up needs more than a resume), in its own
///   clock.
/// - Controls are carried out one at a time, in order. A pause acts at once on every member; a resume, a seek and a
///   rate change pause every member, seek them all to one position, wait until each is there and schedule a start.
///   A member not ready within `readyTimeout` is left out.
/// - A change a member makes on its own (a pause, a resume, a seek from another terminal) is the group's: it is
///   followed as the control it stands for.
/// - The first member still in the group leads: its events are the group's. A member that finishes early, fails or
///   is lost leaves, the others play on; the group ends with its last member.
/// - A lost member is looked for every `rejoinInterval` for as long as the group lasts (when the group can reach
///   receivers) and rejoins (a Cast receiver by its id, an AirPlay speaker by what the user named it with); so does a receiver not reached at the start; a receiver a member's `joinRequest` names is
///   looked for once. A joining member loads where the group will be `joinLead` later and is told to start when the
///   group's timeline reaches the position it reports; too late, it seeks further ahead (`joinAttempts`).
/// - Every second while the group plays and no control is under way, each member measured is told where it should be
///   by its clock (`align`); every tick, each is asked its time (one request in flight at most).
///
/// Thread-safety: a value; the driver keeps it in its monitor and carries out the actions outside it.
struct GroupRules: Sendable {
    /// The figures the rules use (nanoseconds unless said).
    struct Timing: Sendable {
        /// How far ahead of the moment every member is ready a scheduled start is put: enough for the control to reach
        /// each member and for its audio output to wake and write its first period ahead of the instant.
        var startMargin: Int64 = 400_000_000
        /// How long a member may take to be ready (loaded, or seeked while paused) before it is left out (seconds).
        var readyTimeout = 30.0
        /// How far ahead of the group a joining member loads (seconds).
        var joinLead = 0.6
        /// The attempts a joining member gets to be ready before the group reaches it.
        var joinAttempts = 3
        /// How often a lost or absent receiver is looked for.
        var rejoinInterval: Int64 = 1_000_000_000
        /// How often each member is told where it should be (`align`).
        var alignInterval: Int64 = 1_000_000_000
        /// How often each member's time is asked: ten a second, a quarter of what castd answers
        /// (`RequestRateLimit.timeRequests`).
        var askInterval: Int64 = 100_000_000
        /// How often while a control waits for members' clocks (`clocksUnsettled`): twenty a second, half what castd
        /// answers. On a path held 1-8 ms each way the estimate a start is scheduled by is as good as each way's
        /// third quickest exchange: twice the exchanges in the 2 s a start waits bring it twice as close
        /// (GroupStartTests).
        var settlingAskInterval: Int64 = 50_000_000
        /// How long a member that plays alone has to tell where its playback is anchored (`adopt`), seconds: castd
        /// answers at once; one that does not is paused and resumed in step instead.
        var anchorTimeout = 2.0
        /// The join requests waiting at once; more are refused.
        var maximumPendingJoins = 4
        /// The controls waiting behind the one under way; more are refused (`.busy`).
        var maximumQueuedControls = 64
    }

    /// Now, as the driver read it: CLOCK_MONOTONIC (the group's clock, ns) and the wall clock (seconds since 1970,
    /// the clock members' positions are stamped with).
    struct Now: Sendable, Equatable {
        var clock: Int64
        var date: Double
    }

    /// A member as it starts with the group or arrives later.
    struct Arrival: Sendable {
        var name: String
        /// Its receiver's id (the fingerprint of its key); nil for an AirPlay speaker, which proves no key.
        var id: String?
        /// What it is looked for by when it is lost: nil for its `id`. An AirPlay speaker is looked for by the words
        /// the user named it with (`--to`): a speaker on Wi-Fi that drops off and comes back rejoins as a receiver
        /// does; nil and no `id`, it is not looked for again.
        var lookedForAs: String?
        /// Its clock against ours; nil for a member that keeps ours (an AirPlay speaker).
        var clock: ClockProbe?
        /// How far ahead of the instant its first scheduled start must be told (`GroupMemberPlayback.startLead`).
        var startLead: Int64 = 0
        /// How far ahead of the instant a later one (a resume, after a seek) must be told
        /// (`GroupMemberPlayback.resumeLead`).
        var resumeLead: Int64 = 0
        /// An AirPlay speaker: it plays at normal speed only.
        var isSpeaker = false
    }

    /// Why a receiver is looked for, which says what its joining is announced as and how a failure is taken.
    enum Purpose: Sendable, Equatable {
        /// A member that was lost: looked for whatever it answers, `.rejoined`.
        case rejoin
        /// Not reached before the start: given up when it refuses us for good, `.joined`.
        case absent
        /// Named by a member's `joinRequest`: one attempt, `.joined` or `.notAdded`.
        case request
        /// Added by the program (`GroupPlayback.add`): its result is the control's.
        case add
    }

    /// What the driver carries out, in order (sends to one member in the order given).
    enum Action: Sendable, Equatable {
        /// Send `action` to the member (a `resumeAt` or `align` instant is in its clock).
        case send(member: Int, PlaybackControl.Action)
        /// Send the member a time request; report its stamp with `timeRequested`.
        case askTime(member: Int)
        /// Start the media on the joining member (paused at `position`, at `volume`, in a group of `group`); report
        /// `loaded` or `loadFailed`.
        case load(member: Int, position: Double, volume: Double?, group: [String])
        /// Close the member's connections (its reader ends).
        case close(member: Int)
        /// Try once to reach `receiver` (an id or a name) and measure its clock; report `found` or `notFound`.
        case lookFor(String)
        /// The group's event (its leader's, or a queue move any member passed on).
        case deliver(PlaybackEvent)
        /// A member joined, rejoined, left or could not be added.
        case announce(GroupPlayback.MemberChange)
        /// The control numbered `ticket` is carried out; `error` when it could not be.
        case completed(ticket: Int, error: CastError?)
        /// The group is over: its last finish, or the error its last member was lost with.
        case end(Result<PlaybackEvent, CastError>)
    }

    /// What a control waits for from a member.
    enum Awaiting: Sendable, Equatable {
        /// The media loaded paused: `paused`.
        case load
        /// A pause carried out: a position reported while paused.
        case pause
        /// A seek carried out while paused: a position reported after a seeking state, while paused.
        case seek(sawSeeking: Bool)
        /// A seek the member made on its own: its next position.
        case ownSeek
        /// Where its playback is anchored (`adopt`): a `scheduledStart`.
        case anchor
    }

    /// Where a member is in the group.
    enum Standing: Sendable, Equatable {
        /// Reached, its clock measured, waiting for its join to be carried out.
        case candidate
        /// Told to load the media; not a member until it has.
        case loading
        /// In the group.
        case member
        /// Out: finished, failed, lost, removed, a duplicate, or not ready in time.
        case gone
    }

    struct Member: Sendable {
        var name: String
        var id: String?
        /// What a lookout for it, once lost, is keyed by: its id, or a speaker's name (`Arrival.lookedForAs`).
        var lookedForAs: String?
        var startLead: Int64
        var resumeLead: Int64
        var isSpeaker: Bool
        var standing: Standing
        var snapshot = PlaybackSnapshot()
        var awaiting: Awaiting?
        /// Taken out by `remove`: what it still reports is not the group's.
        var removed = false
        /// How it finished, when it did (`carriedOver`).
        var finish: FinishReason?
        var clock: ClockProbe?
        /// A time request was asked for and its stamp is not known yet: no other is asked meanwhile.
        var asking = false
        /// The stamp of the time request in flight.
        var pendingTimeRequest: Int64?
        /// A reply that came before its request's stamp was reported (the reader can be quicker than the sender).
        var earlyReply: (reply: TimeReply, returned: Int64)?
        /// The instant (our clock) it was told to resume at last: where its `align`s count from; nil before its first
        /// scheduled start (`startLead` applies to that one, `resumeLead` to the next).
        var anchor: Int64?
        /// The anchor it reported (`scheduledStart` to an `anchor`): an instant of its clock and the position then.
        var reportedAnchor: (at: Int64, position: Double)?
    }

    /// Where the group is on the media: `position` at `instant` (our clock, ns), moving at `rate`; its answers stay
    /// within what the wire takes (`GroupTiming`).
    struct Timeline: Sendable, Equatable {
        var instant: Int64
        var position: Double
        var rate: Double

        init(instant: Int64, position: Double, rate: Double) {
            self.instant = instant
            self.position = GroupTiming.position(position)
            self.rate = GroupTiming.rate(rate)
        }

        func position(at instant: Int64) -> Double {
            GroupTiming.position(position + Double(instant &- self.instant) / 1e9 * rate)
        }

        /// Nil when the instant is beyond what our clock can stamp.
        func instant(of position: Double) -> Int64? {
            guard let offset = GroupTiming.nanoseconds((position - self.position) / rate) else { return nil }
            let (sum, overflow) = instant.addingReportingOverflow(offset)
            return overflow ? nil : sum
        }
    }

    /// A receiver being looked for.
    struct Lookout: Sendable, Equatable {
        var receiver: String
        var purpose: Purpose
        /// When it is tried next (our clock).
        var due: Int64
        /// An attempt is under way.
        var trying = false
    }

    let timing: Timing
    /// Whether the driver can reach receivers: without, lost members stay out and join requests are refused.
    let canReach: Bool
    var members: [Member]
    /// What the group does: paused until its first start, playing from then on unless paused.
    var intent = PlaybackState.paused
    /// The group's timeline since its last scheduled start (nil before the first).
    var timeline: Timeline?
    /// The group was told to stop: its members' finishes are the group's, not members leaving.
    var stopping = false
    var closed = false
    /// The group is over (`end` was given).
    var ended = false
    /// The finish of the last member that finished, the group's when the last one does.
    var lastFinish: PlaybackEvent?
    /// The control under way, and those waiting behind it.
    var running: Operation?
    var queued: [Operation] = []
    var lookouts: [Lookout] = []
    /// Lost or absent receivers no longer looked for since the group ended or stopped (`carriedOver`).
    private var stillMissing: [String] = []
    private var lastAlign: Int64?
    /// When members' times were last asked.
    private var lastAsk: Int64?
    /// The latest instant an input brought (our clock): when a join that failed is looked for again.
    var latest: Int64 = 0

    /// A group of `members`, each loading the media paused (`awaiting` its `paused`); `start` schedules them.
    init(members: [Arrival], canReach: Bool, timing: Timing = Timing()) {
        precondition(!members.isEmpty, "a group has at least one member")
        self.timing = timing
        self.canReach = canReach
        self.members = members.map {
            Member(
                name: $0.name, id: $0.id, lookedForAs: $0.lookedForAs ?? $0.id, startLead: $0.startLead,
                resumeLead: $0.resumeLead, isSpeaker: $0.isSpeaker, standing: .member,
                awaiting: .load, clock: $0.clock)
        }
    }

    /// The member whose events are the group's: the first one still in it.
    var leader: Int? { members.firstIndex { $0.standing == .member } }
    var isEmpty: Bool { leader == nil }
    /// Nothing more will start: closed, empty or stopping.
    var isOver: Bool { closed || isEmpty || stopping }

    func isActive(_ index: Int) -> Bool { members[index].standing == .member }
    var activeMembers: [Int] { members.indices.filter { isActive($0) } }

    /// The active member whose receiver has `id`.
    func member(receiverID id: String) -> Int? { members.indices.first { isActive($0) && members[$0].id == id } }

    /// `instant` of our clock in a member's clock, when its clock is known (a member that keeps ours: the instant).
    func theirInstant(_ instant: Int64, member index: Int) -> Int64? {
        guard let clock = members[index].clock else { return instant }
        return clock.estimate.flatMap { GroupTiming.instant($0.theirs(atOurs: Double(instant) / 1e9)) }
    }

    // MARK: Members' reports

    /// A member's event. Returns what follows: its delivery when it leads, the group following a change the member
    /// made on its own, the group's end with its last member.
    mutating func received(_ event: PlaybackEvent, from index: Int, now: Now) -> [Action] {
        guard members.indices.contains(index), !members[index].removed, !ended else { return [] }
        if case .joinRequest(let receiver) = event { return requestJoin(receiver, now: now) }
        guard members[index].standing == .member else { return [] }
        var actions: [Action] = []
        let leading = leader == index
        _ = members[index].snapshot.apply(event)
        settleAwaiting(index, event)
        switch event {
        case .finished(let reason, let error, _):
            members[index].standing = .gone
            members[index].awaiting = nil
            members[index].finish = reason
            lastFinish = event
            if isEmpty { return actions + end(.success(event)) }
            // Reaching the end a moment before the others is not leaving, nor stopping with the group.
            if reason != .playbackEnded && !stopping {
                let why = "finished: \(reason.rawValue)\(error.map { " (\(printable($0)))" } ?? "")"
                actions.append(.announce(.left(members[index].name, why: why)))
            }
        case .skipRequest:
            actions.append(.deliver(event))  // `cast next` to any member: the queue is the sender's
        default:
            if leading { actions.append(.deliver(event)) }
            if let own = ownChange(of: index, event) { actions += enqueue(own, now: now) }
        }
        return actions + advance(now: now)
    }

    /// What a member's event does to what a control waits for from it.
    private mutating func settleAwaiting(_ index: Int, _ event: PlaybackEvent) {
        let paused = members[index].snapshot.state == .paused
        switch (members[index].awaiting, event) {
        case (.load?, .playbackState(.paused)): members[index].awaiting = nil
        case (.pause?, .position) where paused: members[index].awaiting = nil
        case (.seek?, .playbackState(.seekingForward)), (.seek?, .playbackState(.seekingBackward)):
            members[index].awaiting = .seek(sawSeeking: true)
        case (.seek(true)?, .position) where paused: members[index].awaiting = nil
        case (.ownSeek?, .position): members[index].awaiting = nil
        case (.anchor?, .scheduledStart(let at, let position)):
            members[index].reportedAnchor = (at, position)
            members[index].awaiting = nil
        case (.anchor?, .playbackState(let state)) where state != .playing:
            members[index].awaiting = nil  // it stands: no anchor comes
        default: break
        }
    }

    /// A member's own change (not one a control asked for) as the control the group follows it with; nil when the
    /// event is not one or belongs to a control.
    private mutating func ownChange(of index: Int, _ event: PlaybackEvent) -> Operation? {
        guard running == nil, !closed, members[index].awaiting == nil, case .playbackState(let now) = event else {
            return nil
        }
        switch now {
        case .paused where intent == .playing: return Operation(ticket: nil, kind: .pause)
        case .playing where intent == .paused: return Operation(ticket: nil, kind: .resume)
        case .seekingForward, .seekingBackward:
            // Its position after the seek says where the group goes.
            members[index].awaiting = .ownSeek
            return Operation(ticket: nil, kind: .followSeek(member: index))
        default: return nil
        }
    }

    /// A member's connection broke (or its reader failed): it leaves, and is looked for again while the group lasts.
    mutating func lost(_ index: Int, error: CastError, now: Now) -> [Action] {
        guard members.indices.contains(index), members[index].standing == .member, !closed, !ended else { return [] }
        members[index].standing = .gone
        members[index].awaiting = nil
        if isEmpty { return end(lastFinish.map { .success($0) } ?? .failure(error)) }
        var actions: [Action] = [.announce(.left(members[index].name, why: "lost: \(error.message)"))]
        if !stopping, canReach, let key = members[index].lookedForAs {
            lookouts.append(Lookout(receiver: key, purpose: .rejoin, due: now.clock + timing.rejoinInterval))
        }
        actions += advance(now: now)
        return actions
    }

    /// A control could not be sent to a member: it awaits nothing (its reader will see the connection end).
    mutating func sendFailed(_ index: Int, now: Now) -> [Action] {
        guard members.indices.contains(index) else { return [] }
        members[index].awaiting = nil
        return advance(now: now)
    }

    // MARK: Clocks

    /// The stamp of the time request `askTime` asked for (nil: it could not be sent). Returns the exchange the
    /// member's estimator took, when a reply that came first completes it.
    @discardableResult
    mutating func timeRequested(_ index: Int, stamp: Int64?) -> ClockEstimator.Exchange? {
        guard members.indices.contains(index) else { return nil }
        members[index].asking = false
        guard let stamp else { return nil }
        if let early = members[index].earlyReply, early.reply.sent == stamp {
            members[index].earlyReply = nil
            return try? members[index].clock?.add(sent: stamp, reply: early.reply, returned: early.returned)
        }
        members[index].pendingTimeRequest = stamp
        return nil
    }

    /// A member's time reply, stamped `returned` (our clock) on arrival. One that echoes no request in flight is kept
    /// for the request's stamp, which may come after it; any other is dropped. Returns the exchange the member's
    /// estimator took.
    @discardableResult
    mutating func timeReply(_ reply: TimeReply, returned: Int64, from index: Int) -> ClockEstimator.Exchange? {
        guard members.indices.contains(index) else { return nil }
        guard members[index].pendingTimeRequest == reply.sent else {
            if members[index].asking { members[index].earlyReply = (reply, returned) }
            return nil
        }
        members[index].pendingTimeRequest = nil
        return try? members[index].clock?.add(sent: reply.sent, reply: reply, returned: returned)
    }

    /// Whether an active member's clock is not yet known closely enough to schedule a start by
    /// (`GroupTiming.clockSettled`: within 0.5 ms, or 2 s of exchanges).
    var clocksUnsettled: Bool {
        activeMembers.contains { index in
            guard let clock = members[index].clock else { return false }
            return !GroupTiming.clockSettled(uncertainty: clock.estimate?.uncertainty, span: clock.span)
        }
    }

    /// Each active member's name and clock estimate (members that keep ours, or without one yet, left out).
    var clockEstimates: [(name: String, estimate: ClockEstimator.Estimate)] {
        activeMembers.compactMap { index in
            members[index].clock?.estimate.map { (members[index].name, $0) }
        }
    }

    /// The driver's timer: time requests, alignments, the deadline of the control under way, receivers due to be
    /// looked for.
    mutating func tick(now: Now) -> [Action] {
        guard !closed, !ended else { return [] }
        var actions: [Action] = []
        // Due a quarter interval early at most, so that a timer ticking a little early does not skip a turn.
        let interval = running?.deadline != nil && clocksUnsettled ? timing.settlingAskInterval : timing.askInterval
        if lastAsk.map({ now.clock - $0 >= interval - interval / 4 }) ?? true {
            lastAsk = now.clock
            for index in activeMembers where members[index].clock != nil && !members[index].asking {
                members[index].asking = true
                actions.append(.askTime(member: index))
            }
        }
        if lastAlign.map({ now.clock - $0 >= timing.alignInterval }) ?? true, let alignments = align(now: now) {
            lastAlign = now.clock
            actions += alignments
        }
        actions += advance(now: now)
        actions += lookOut(now: now)
        return actions
    }

    /// Where each member should be by its clock: the group time since its last scheduled start, at an instant of its
    /// clock. Nil while no alignment belongs (paused, or a control under way: an alignment must belong to the
    /// timeline the member follows).
    private func align(now: Now) -> [Action]? {
        guard intent == .playing, running == nil else { return nil }
        return activeMembers.compactMap { index in
            guard let anchor = members[index].anchor, now.clock > anchor, members[index].clock != nil,
                let theirs = theirInstant(now.clock, member: index),
                let elapsed = GroupTiming.elapsed(Double(now.clock - anchor) / 1e9)
            else { return nil }
            return .send(member: index, .align(elapsed: elapsed, at: theirs))
        }
    }

    // MARK: Ending

    /// What goes on to a queue's next file once the group is over: the members that played to the end or were stopped
    /// (not those that failed, were lost or removed), in order, and the receivers still looked for (lost members,
    /// receivers not reached yet), so that the next file starts on the same group and nobody is looked for twice.
    var carriedOver: (members: [Int], lookedFor: [String]) {
        let kept = members.indices.filter { index in
            !members[index].removed && [.playbackEnded, .userExited].contains(members[index].finish)
        }
        var lookedFor = stillMissing
        for lookout in lookouts where [.rejoin, .absent].contains(lookout.purpose) {
            lookedFor.append(lookout.receiver)
        }
        return (kept, lookedFor.reduce(into: []) { if !$0.contains($1) { $0.append($1) } })
    }

    /// No receiver is looked for any more (the group is over or stopping); those that were, lost or not reached yet,
    /// are kept for `carriedOver`.
    mutating func clearLookouts() {
        for lookout in lookouts where [.rejoin, .absent].contains(lookout.purpose) {
            stillMissing.append(lookout.receiver)
        }
        lookouts = []
    }

    /// The group is over: every lookout and control ends with it.
    private mutating func end(_ result: Result<PlaybackEvent, CastError>) -> [Action] {
        ended = true
        clearLookouts()
        return [.end(result)] + completeAll()
    }

    /// The driver closes the group: every member's connections close, every control waiting completes.
    mutating func close() -> [Action] {
        guard !closed else { return [] }
        closed = true
        clearLookouts()
        return members.indices.map { .close(member: $0) } + completeAll()
    }

    /// Completes the control under way and those queued (the group is closed or over).
    private mutating func completeAll() -> [Action] {
        let operations = (running.map { [$0] } ?? []) + queued
        running = nil
        queued = []
        let error = isEmpty ? CastError(.connectionLost, "no member of the group is left") : nil
        return operations.compactMap { $0.ticket.map { .completed(ticket: $0, error: error) } }
    }
}
