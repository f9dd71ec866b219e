import CastBase
public import CastProtocol
import CastSecurity
import CastSystem
import Dispatch
import FoundationEssentials
import Synchronization

/// One file played by several Cast receivers (and AirPlay speakers) in step: a group (docs/multiroom.md).
///
/// The group's clock is this process's CLOCK_MONOTONIC; each member's clock is measured against it over the member's
/// own control connection. What the group does (start in step, pause, resume and seek in step, follow a member's own
/// change, lose and find members, joins, drift) is decided by `GroupRules`, a pure machine; this class is its driver:
/// it reads each member's connection on a thread of its own, ticks one timer, feeds what happens to the rules and
/// carries out the actions they return, never while holding its lock (a control to a member is written on that
/// member's queue, in the order the rules gave; a receiver is looked for on a thread of its own).
///
/// Controls (`control`, `add`, the start) block their caller until the rules have carried them out and the sends
/// they made are written (a scheduled start: until every member is ready, at most `readyTimeout`).
///
/// Thread-safety: everything that changes is in `shared`, a `Monitor`: the rules, the members' playbacks (numbered
/// as the rules number them, only ever added), the events for `nextEvent` and the controls done. Any thread may
/// call any method; one thread takes events with `nextEvent`.
public final class GroupPlayback: Sendable {
    let onMemberChange: @Sendable (MemberChange) -> Void
    /// How a receiver is reached, given its id (a lost member) or a name someone asked to add: a Cast receiver (its
    /// connection), or an AirPlay speaker and the audio it is to be fed; nil: lost members stay out and join requests
    /// are refused.
    let reach: (@Sendable (_ receiver: String) throws(CastError) -> Destination)?
    /// What every member plays: a file served to each, or a URL each opens.
    let media: GroupMedia
    let configDirectory: String
    /// The AirPlay speakers among the members, by the rules' numbers (`carryOver` starts each anew).
    let speakers: [Int: ReceiverDescription]
    let shared: Monitor<Shared>
    /// The rules' timer (Dispatch's timers are thread-safe; the `Mutex` says so to the compiler).
    private let timer: Mutex<any DispatchSourceTimer>
    /// The timer's ticks, for the clock log's once a second.
    private let clockLogTicks = Mutex(0)
    /// Where member changes are told, in order, outside the lock.
    private let announcements = DispatchQueue(label: "CastKit.GroupPlayback.announcements")
    /// Where joining members load the media (one join at a time: the rules carry them out in turn).
    private let joins = DispatchQueue(label: "CastKit.GroupPlayback.joins")

    /// How far ahead of the moment every member is ready a scheduled start is put (nanoseconds).
    public static let startMargin: Int64 = GroupRules.Timing().startMargin
    /// How long a member may take to be ready (loaded, or seeked while paused) before it is left out (seconds).
    public static let readyTimeout = GroupRules.Timing().readyTimeout
    /// The span of exchanges from which a member's clock rate is estimated (seconds).
    static let rateSpan = 3.0
    /// How often the rules' timer ticks (milliseconds): 20 a second, so that members' clocks can be measured as often
    /// as castd answers while a start waits for them (`GroupRules.Timing.settlingAskInterval`); 10 a second while the
    /// group plays (`askInterval`), so that a rate is known to a few ppm within seconds, and that on a jittery path
    /// (Wi-Fi) enough exchanges were quick both ways for the estimator's filter to keep.
    static let clockInterval = 50
    /// The exchanges a member's estimate is made of: the last minute's.
    static let clockWindow = 600

    /// A member joining or leaving, for the program to say (`cast send` writes a line on standard error).
    public enum MemberChange: Sendable, Equatable {
        /// Added at a member's `joinRequest`, or found after the start (a receiver that could not be reached before it).
        case joined(String)
        /// A lost member back in the group.
        case rejoined(String)
        /// Out of the group: finished early, failed, lost, or not ready in time; `why` says which.
        case left(String, why: String)
        /// It could not start with the others, or someone asked for it to be added, and it could not be.
        case notAdded(String, why: String)
    }

    /// Where a group plays: a Cast receiver at the other end of its connection (open, its key checked), or an AirPlay
    /// speaker, fed the decoded audio of the file by `source` (`PCMDecoderProcess` for `cast`).
    public enum Destination: Sendable {
        /// A Cast receiver: its control connection (the group owns it from here).
        case receiver(ReceiverConnection)
        /// An AirPlay speaker (a description of kind `.speaker`) and the source of its audio (the group owns it).
        case speaker(ReceiverDescription, source: any PCMSource)
    }

    /// What the group's events are taken from.
    enum Item {
        case event(PlaybackEvent)
        case end(Result<PlaybackEvent, CastError>)
    }

    struct Shared {
        var rules: GroupRules
        /// Each member's playback once it plays (by the rules' numbers).
        var playbacks: [Int: any GroupMemberPlayback]
        /// A receiver reached, not playing yet: its connection.
        var connections: [Int: ReceiverConnection] = [:]
        /// A speaker reached, not playing yet: it and the audio it is to be fed.
        var joiningSpeakers: [Int: (speaker: ReceiverDescription, source: any PCMSource)] = [:]
        /// The speakers that joined while the group played (`carryOver` starts each anew, as `speakers`).
        var joinedSpeakers: [Int: ReceiverDescription] = [:]
        /// Each member's queue: what is sent to it is written there, in order.
        var queues: [Int: DispatchQueue] = [:]
        var items: [Item] = []
        var nextTicket = 0
        /// The controls carried out (by ticket) and whether they failed.
        var completed: [Int: Result<Void, CastError>] = [:]
    }

    init(
        rules: GroupRules, playbacks: [Int: any GroupMemberPlayback], names: [String], media: GroupMedia,
        configDirectory: String, speakers: [Int: ReceiverDescription] = [:],
        reach: (@Sendable (String) throws(CastError) -> Destination)?,
        onMemberChange: @escaping @Sendable (MemberChange) -> Void
    ) {
        self.memberNames = names
        self.speakers = speakers
        self.media = media
        self.configDirectory = configDirectory
        self.reach = reach
        self.onMemberChange = onMemberChange
        self.shared = Monitor(Shared(rules: rules, playbacks: playbacks))
        self.timer = Mutex(DispatchSource.makeTimerSource(queue: DispatchQueue(label: "CastKit.GroupPlayback.timer")))
    }

    /// The names of the members the group started with, in the order given.
    public let memberNames: [String]

    /// The level the group starts at: the first member's.
    public var initialVolume: (level: Double, muted: Bool) {
        shared.withLock { $0.playbacks[0] }?.levelAtStart ?? (1, false)
    }

    /// Now, for the rules.
    static func now() -> GroupRules.Now {
        GroupRules.Now(clock: MonotonicClock.nanoseconds(), date: Date().timeIntervalSince1970)
    }

    // MARK: The driver

    /// Feeds one input to the rules and carries out what they return.
    func feed(_ input: (inout GroupRules, GroupRules.Now) -> [GroupRules.Action]) {
        let now = Self.now()
        shared.withLock { state in dispatch(input(&state.rules, now), in: &state) }
    }

    /// Feeds a control numbered with a ticket of its own and waits until it is carried out.
    func perform(
        _ input: (inout GroupRules, Int, GroupRules.Now) throws(CastError) -> [GroupRules.Action]
    ) throws(CastError) {
        let now = Self.now()
        let accepted = shared.withLock { state -> Result<Int, CastError> in
            let ticket = state.nextTicket
            state.nextTicket += 1
            do throws(CastError) {
                dispatch(try input(&state.rules, ticket, now), in: &state)
                return .success(ticket)
            } catch {
                return .failure(error)
            }
        }
        try waitFor(accepted.get())
    }

    /// Waits until the control numbered `ticket` is carried out; throws what it failed with.
    func waitFor(_ ticket: Int) throws(CastError) {
        try shared.withLock(when: { $0.completed[ticket] != nil }) { state in
            state.completed.removeValue(forKey: ticket)!
        }
        .get()
    }

    /// Hands each action to where it is carried out; called inside the monitor, so it only queues (no I/O here).
    func dispatch(_ actions: [GroupRules.Action], in state: inout Shared) {
        for action in actions {
            switch action {
            case .send(let index, let control):
                guard let playback = state.playbacks[index] else { continue }
                queue(of: index, in: &state).async { [self] in
                    do throws(CastError) {
                        try playback.control(control)
                    } catch {
                        feed { rules, now in rules.sendFailed(index, now: now) }
                    }
                }
            case .askTime(let index):
                guard let playback = state.playbacks[index] else { continue }
                queue(of: index, in: &state).async { [self] in
                    let stamp = (try? playback.requestTime()) ?? nil
                    let exchange = shared.withLock { state in state.rules.timeRequested(index, stamp: stamp) }
                    if let exchange { logExchange(exchange, of: index) }
                }
            case .load(let index, let position, let volume, let group):
                if let connection = state.connections.removeValue(forKey: index) {
                    joins.async { [self] in load(index, over: connection, at: position, volume: volume, group: group) }
                } else if let joining = state.joiningSpeakers.removeValue(forKey: index) {
                    joins.async { [self] in load(index, joining, at: position, volume: volume) }
                }
            case .close(let index):
                let playback = state.playbacks[index]
                let connection = state.connections.removeValue(forKey: index)
                state.joiningSpeakers[index] = nil
                queue(of: index, in: &state).async {
                    playback?.close()
                    connection?.close()
                }
            case .lookFor(let receiver):
                startDetachedThread(name: "cast group look-out") { [self] in lookFor(receiver) }
            case .deliver(let event):
                state.items.append(.event(event))
            case .end(let result):
                state.items.append(.end(result))
            case .announce(let change):
                announcements.async { [onMemberChange] in onMemberChange(change) }
            case .completed(let ticket, let error):
                // Done once what it sent is written: after every member's queue has carried out what came before.
                let written = DispatchGroup()
                for queue in state.queues.values { queue.async(group: written) {} }
                written.notify(queue: .global()) { [self] in
                    shared.withLock { state in state.completed[ticket] = error.map { .failure($0) } ?? .success(()) }
                }
            }
        }
    }

    private func queue(of index: Int, in state: inout Shared) -> DispatchQueue {
        if let queue = state.queues[index] { return queue }
        let queue = DispatchQueue(label: "CastKit.GroupPlayback.member\(index)")
        state.queues[index] = queue
        return queue
    }

    /// A member's reader: events and clock replies until its connection ends or it finishes.
    func startReader(_ index: Int, _ playback: any GroupMemberPlayback) {
        startDetachedThread(name: "cast group member \(index)") { [self] in
            while true {
                let event: PlaybackEvent
                do throws(CastError) {
                    event = try playback.nextEvent { [self] reply, returned in
                        let exchange = shared.withLock { state in
                            state.rules.timeReply(reply, returned: returned, from: index)
                        }
                        if let exchange { logExchange(exchange, of: index) }
                    }
                } catch {
                    return feed { rules, now in rules.lost(index, error: error, now: now) }
                }
                feed { rules, now in rules.received(event, from: index, now: now) }
                if case .finished = event { return }
            }
        }
    }

    func startTimer() {
        timer.withLock { timer in
            timer.schedule(
                deadline: .now() + .milliseconds(Self.clockInterval), repeating: .milliseconds(Self.clockInterval))
            timer.setEventHandler { [self] in
                feed { rules, now in rules.tick(now: now) }
                logClocks()
            }
            timer.resume()
        }
    }

    /// Test and benchmark only (`CAST_TEST_CLOCK_LOG`): each member's clock estimate, once a second (the timer's
    /// every twentieth tick; the timer's queue is serial, so the count needs no lock of its own beyond the Mutex).
    private func logClocks() {
        guard let log = GroupClockLog.configured else { return }
        let due = clockLogTicks.withLock { ticks -> Bool in
            ticks += 1
            return ticks % (1000 / Self.clockInterval) == 0
        }
        guard due else { return }
        log.record(at: MonotonicClock.nanoseconds(), shared.withLock { $0.rules.clockEstimates })
    }

    /// Test and benchmark only (`CAST_TEST_CLOCK_LOG`): an exchange a member's estimator took.
    private func logExchange(_ exchange: ClockEstimator.Exchange, of index: Int) {
        guard let log = GroupClockLog.configured else { return }
        log.record(exchange, of: shared.withLock { $0.rules.members[index].name })
    }

    // MARK: The group as a playback

    /// The next event of the group: the leader's, the finish when the last member finished.
    /// - Throws: `CastError` `.connectionLost` when the last member was lost.
    public func nextEvent() throws(CastError) -> PlaybackEvent {
        let item = shared.withLock(when: { !$0.items.isEmpty }) { state -> Item in
            let item = state.items[0]
            // The end stays: asked again, the group is still over.
            if case .event = item { state.items.removeFirst() }
            return item
        }
        switch item {
        case .event(let event): return event
        case .end(let result): return try result.get()
        }
    }

    /// Carries out `action` on the whole group. `pause`, `stop`, the volume, mute and the others act at once on every
    /// member; `resume`, `seek` and `rate` go through a scheduled start, so the call returns when every member is ready
    /// again (or left out after `readyTimeout`).
    /// - Throws: `CastError` `.connectionLost` only when no member is left to act on; `.usage` for a rate other than 1
    ///   while an AirPlay speaker is a member (it plays at normal speed only, and the others would leave it behind).
    public func control(_ action: PlaybackControl.Action) throws(CastError) {
        try perform { rules, ticket, now throws(CastError) in try rules.control(action, ticket: ticket, now: now) }
    }

    /// Carries out `action` on one member only (the receiver whose welcome's id is `receiverID`): its volume or mute,
    /// which belong to it, as with AirPlay 2. Timeline actions (pause, seek, rate, …) are the group's: `.usage`.
    /// - Throws: `CastError` `.noSuchReceiver` when no member still in the group has that id, `.usage` for an action
    ///   that is not a member's own.
    public func control(_ action: PlaybackControl.Action, receiverID: String) throws(CastError) {
        try perform { rules, ticket, _ throws(CastError) in
            try rules.control(action, receiverID: receiverID) + [.completed(ticket: ticket, error: nil)]
        }
    }

    /// Takes the receiver whose id is `receiverID` (its welcome's) out of the group while it plays: it is stopped and
    /// its connections closed, and the others play on undisturbed (the first one left leads). Says so through
    /// `onMemberChange` (`.left(name, why: "removed")`).
    /// - Throws: `CastError` `.noSuchReceiver` when no member still in the group has that id; `.usage` when it is the
    ///   last one (a group is never empty: stop it instead).
    public func remove(receiverID: String) throws(CastError) {
        try perform { rules, ticket, now throws(CastError) in
            try rules.remove(receiverID: receiverID, now: now) + [.completed(ticket: ticket, error: nil)]
        }
    }

    /// The ids of the Cast receivers in the group now (finished, lost and removed members left out), in the order they
    /// joined.
    public var receiverIDs: [String] {
        shared.withLock { state in state.rules.activeMembers.compactMap { state.rules.members[$0].id } }
    }

    /// The level the receiver whose welcome's id is `receiverID` last reported (0...1, muted); nil when it is not in
    /// the group or has reported none.
    public func volume(ofReceiver receiverID: String) -> (level: Double, muted: Bool)? {
        shared.withLock { state in
            state.rules.member(receiverID: receiverID).flatMap { state.rules.members[$0].snapshot.volume }
        }
    }

    /// Closes every member's connections; their readers end.
    public func close() {
        timer.withLock { $0.cancel() }
        feed { rules, _ in rules.close() }
    }
}
