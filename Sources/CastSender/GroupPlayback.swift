public import CastProtocol
import CastSecurity
import Dispatch
import FoundationEssentials
import Synchronization

/// One file played by several Cast receivers in step: a group (docs/multiroom.md).
///
/// The group's clock is this process's CLOCK_MONOTONIC. Each member's clock is measured against it over the member's
/// own control connection (the clock exchange: 8 exchanges before it starts, then one a second for as long as it
/// plays). Nothing starts on a member's own: every start is prepared, then scheduled. Each member loads the media
/// paused (`autoplay: false`), or seeks there while paused, and says when it is ready (`paused`, its position); then
/// every member is told to resume at the same instant of the group clock, each in its own clock (`resumeAt`), a
/// little ahead (`startMargin`). A pause acts at once everywhere; a resume, a seek and a rate change go through
/// "pause, seek every member to the same position, resume at one instant", so that the members meet again exactly.
///
/// An AirPlay speaker can be a member (`start(_:to:)`, `.speaker`): it keeps the group's clock (this process is its
/// timing server), so it is never measured, and its scheduled start is put far enough ahead for its buffer (2.5 s).
///
/// A change one member makes on its own (`cast pause kitchen` from another terminal, its remote, a seek on it) is the
/// group's: the group follows it, pausing, resuming or seeking every member in step.
///
/// The first member that still plays leads: its events are the group's (the status line follows it). A member that
/// finishes early, fails or is lost leaves the group (`onMemberChange`), and the others play on undisturbed; the
/// group finishes when the last member does. A member that was lost (its connection broke: castd killed, the link
/// down) is looked for again once a second, when the group was given a way to reach receivers (`reach`), and rejoins
/// in step. With `reach`, a `joinRequest` from a member (`cast join kitchen --to "living room"` elsewhere) adds that
/// receiver.
///
/// A member that cannot start (not reached, its clock exchange broken, the media refused) does not stop the others:
/// the group starts with those that can, and looks for the ones that were not reached while it plays.
///
/// A member joins a group that plays (`add`, or a rejoin) without disturbing the others: it loads the media paused
/// where the group will be a moment later, and is told to resume at the instant the group's timeline reaches the
/// position it reports; from then on it is aligned as the others are.
///
/// Thread-safety: one thread takes events with `nextEvent`; `control` may be called from any thread (controls are
/// carried out one at a time, and a scheduled one blocks its caller until every member is ready, at most
/// `readyTimeout`). Each member's connection is read by a thread of its own; what they learn is kept in `State`,
/// in a `Monitor` (so that a control can wait for the members); the members themselves are there too, and only ever
/// appended (a member's index never changes). `controlling` serialises whole controls and joins; it is never taken
/// inside the monitor.
public final class GroupPlayback: Sendable {
    private let onMemberChange: @Sendable (MemberChange) -> Void
    /// How a receiver is reached, given its id (a lost member) or a name someone asked to add; nil: lost members stay
    /// out and join requests are refused.
    private let reach: (@Sendable (_ receiver: String) throws(CastError) -> ReceiverConnection)?
    /// What every member plays, served to each (a regular file: members read it at their own offsets).
    private let file: MediaFile
    private let configDirectory: String
    private let shared: Monitor<State>
    private let controlling = Mutex(())
    /// The clock exchanges' timer (Dispatch's timers are thread-safe; the `Mutex` says so to the compiler).
    private let clockTimer: Mutex<any DispatchSourceTimer>
    /// Where the group follows what a member did on its own (never on a reader thread: a control waits for them).
    private let reactions = DispatchQueue(label: "CastKit.GroupPlayback.reactions")
    /// Measurements so far (the clock timer's queue counts them).
    private let ticks = Atomic(0)

    /// How far ahead of the moment every member is ready a scheduled start is put (nanoseconds): enough for the
    /// control to reach each member and for its audio output to wake and write its first period ahead of the
    /// instant.
    public static let startMargin: Int64 = 400_000_000
    /// How long a member may take to be ready (loaded, or seeked while paused) before it is left out (seconds).
    public static let readyTimeout = 30.0
    /// The span of exchanges from which a member's clock rate is estimated (seconds).
    static let rateSpan = 3.0
    /// How often each member's clock is measured while the group plays (milliseconds): 10 a second, half of what
    /// castd answers, so that a rate is known to a few ppm within seconds, and that on a jittery path (Wi-Fi) enough
    /// exchanges were quick both ways for the estimator's filter to keep.
    static let clockInterval = 100
    /// Every how many measurements a member is told where it should be (`align`): once a second.
    static let alignEvery = 10
    /// The exchanges a member's estimate is made of: the last minute's.
    static let clockWindow = 600
    /// How far ahead of the group a joining member loads (seconds): its session's start (a decoder worker that is
    /// ready, the probe, the first packets) is a few hundred milliseconds; a member that is late all the same seeks
    /// further ahead and tries again.
    static let joinLead = 0.6
    /// The attempts a joining member gets to be ready before the group reaches it.
    static let joinAttempts = 3
    /// How often a lost member is looked for (seconds).
    static let rejoinInterval = 1.0
    /// The join requests waiting at once; more are refused.
    static let maximumPendingJoins = 4

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

    private struct Member: Sendable {
        let name: String
        let playback: any GroupMemberPlayback
        /// Its receiver's id (the fingerprint of its key), by which it is reached again when lost; nil for an AirPlay
        /// speaker (reached by its name alone, it is not looked for again).
        let id: String?
    }

    /// Where a group plays: a Cast receiver at the other end of its connection (open, its key checked), or an AirPlay
    /// speaker, fed the decoded audio of the file by `source` (`PCMDecoderProcess` for `cast`).
    public enum Destination: Sendable {
        /// A Cast receiver: its control connection (the group owns it from here).
        case receiver(ReceiverConnection)
        /// An AirPlay speaker (a description of kind `.speaker`) and the source of its audio (the group owns it).
        case speaker(ReceiverDescription, source: any PCMSource)
    }

    /// Where the group is on the media: `position` at `instant` (our clock, ns), moving at `rate`. Its answers stay
    /// within what the wire takes, whatever a member reported (`GroupTiming`).
    private struct Timeline {
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

    /// What a control waits for from a member.
    private enum Awaiting {
        /// The media loaded paused: `paused`.
        case load
        /// A pause carried out: a position reported while paused.
        case pause
        /// A seek carried out while paused: a position reported after a seeking state, while paused.
        case seek(sawSeeking: Bool)
        /// A seek the member made on its own: its next position.
        case ownSeek
    }

    private struct MemberState {
        var snapshot = PlaybackSnapshot()
        var awaiting: Awaiting?
        /// Finished, failed or lost: out of the group.
        var gone = false
        /// Taken out by `remove`: what it still reports is not the group's.
        var removed = false
        /// Its clock against ours; nil for a member that keeps ours (an AirPlay speaker: we are its timing server).
        var clock: ClockProbe?
        /// The stamp of the time request in flight, if any.
        var pendingTimeRequest: Int64?
        /// The instant (our clock, ns) it was told to resume at last: where its `align`s count from.
        var anchor: Int64?
    }

    private enum Item {
        /// An event, and whether its member led the group when it came.
        case event(member: Int, PlaybackEvent, leading: Bool)
        case lost(member: Int, CastError)
    }

    private struct State {
        /// Every member that ever joined, in the order they did.
        var roster: [Member]
        var members: [MemberState]
        var queue: [Item] = []
        var closed = false
        /// The finish of the last member that finished, reported when the last one does.
        var lastFinish: PlaybackEvent?
        /// What the group does: paused until its first start, playing from then on unless paused.
        var intent = PlaybackState.paused
        /// A control is being carried out: what the members report meanwhile is its doing, not theirs.
        var operating = false
        /// The group's timeline since its last scheduled start (nil before the first).
        var timeline: Timeline?
        /// The group was told to stop: its members' finishes are the group's, not members leaving.
        var stopping = false
        /// The receivers asked for by `joinRequest`s not carried out yet (lowercased), at most `maximumPendingJoins`.
        var pendingJoins: Set<String> = []

        /// The member whose events are the group's: the first one still in it.
        var leader: Int? { members.firstIndex { !$0.gone } }
        var isEmpty: Bool { leader == nil }

        func isActive(_ index: Int) -> Bool { !members[index].gone }

        /// `instant` of our clock in a member's clock, when its clock is known (a member that keeps ours: the
        /// instant).
        func theirInstant(_ instant: Int64, member index: Int) -> Int64? {
            guard let clock = members[index].clock else { return instant }
            return clock.estimate.flatMap { GroupTiming.instant($0.theirs(atOurs: Double(instant) / 1e9)) }
        }
    }

    private init(
        members: [Member], clocks: [ClockProbe?], file: MediaFile, configDirectory: String,
        reach: (@Sendable (String) throws(CastError) -> ReceiverConnection)?,
        onMemberChange: @escaping @Sendable (MemberChange) -> Void
    ) {
        self.memberNames = members.map(\.name)
        self.file = file
        self.configDirectory = configDirectory
        self.reach = reach
        self.onMemberChange = onMemberChange
        self.shared = Monitor(State(roster: members, members: clocks.map { MemberState(clock: $0) }))
        self.clockTimer = Mutex(
            DispatchSource.makeTimerSource(queue: DispatchQueue(label: "CastKit.GroupPlayback.clock")))
    }

    /// The names of the members the group started with, in the order given.
    public let memberNames: [String]

    /// The level the group starts at: the leader's.
    public var initialVolume: (level: Double, muted: Bool) { member(0).playback.levelAtStart }

    /// The member at `index` (any thread; not under `lock`).
    private func member(_ index: Int) -> Member { shared.withLock { state in state.roster[index] } }

    /// Plays `file` on every receiver at the other end of `connections` (open, their keys checked), in step, and
    /// serves it to each. The group owns the connections from here. Returns once every member is ready and their
    /// start is scheduled.
    ///
    /// A member that cannot start (its clock exchange broke, it refused the media) is left out and the others play,
    /// as an AirPlay 2 or Snapcast user expects: `onMemberChange` says `.notAdded` with why.
    ///
    /// `reach`, when given, connects to a receiver by its id or name (its key checked, as `ReceiverConnection.reach`
    /// does): a member that is lost, or whose connection broke at the start, is then looked for once a second and
    /// joins the group in step (`.rejoined`); so is every receiver of `absent` (ids or names that could not be
    /// reached before the start, `.joined` when it appears); and a receiver a member's `joinRequest` names is added.
    /// `onMemberChange` says who joined, rejoined or left, and who could not be added.
    /// - Throws: `CastError` when no member could start: the first member's failure to measure its clock
    ///   (`.connectionLost`) or to accept the media (`.busy`, `.notAuthorised`, a refusal); every connection is
    ///   closed then.
    public static func start(
        _ file: MediaFile, over connections: [ReceiverConnection], configDirectory: String, startTime: Double? = nil,
        volume: Double? = nil, autoplay: Bool = true, absent: [String] = [],
        reach: (@Sendable (_ receiver: String) throws(CastError) -> ReceiverConnection)? = nil,
        onMemberChange: @escaping @Sendable (MemberChange) -> Void
    ) throws(CastError) -> GroupPlayback {
        try start(
            file, to: connections.map { .receiver($0) }, configDirectory: configDirectory, startTime: startTime,
            volume: volume, autoplay: autoplay, absent: absent, reach: reach, onMemberChange: onMemberChange)
    }

    /// Plays `file` on every destination in step: Cast receivers as `start(_:over:…)` says, and AirPlay speakers, each
    /// streamed the audio its source decodes, set up paused (nothing sent) and started by the same schedule as the
    /// receivers (docs/multiroom.md, "AirPlay speakers in a group"). The first destination that starts leads. With
    /// `autoplay` false every member waits paused at the start position until the first `resume` (CastKit's
    /// `shouldAutoplay`). `queue`: where `file` is in the sender's queue, which the members' status shows (and
    /// `cast next` reads); members added later do not carry it.
    /// - Throws: `CastError`: as `start(_:over:…)`, and a speaker's refusal or failure to set up.
    public static func start(
        _ file: MediaFile, to destinations: [Destination], configDirectory: String, startTime: Double? = nil,
        volume: Double? = nil, autoplay: Bool = true, absent: [String] = [],
        reach: (@Sendable (_ receiver: String) throws(CastError) -> ReceiverConnection)? = nil,
        queue: QueuePlace? = nil, onMemberChange: @escaping @Sendable (MemberChange) -> Void
    ) throws(CastError) -> GroupPlayback {
        precondition(!destinations.isEmpty, "a group has at least one member")
        // Who could not start, by the order they were given in.
        var failures: [(order: Int, name: String, id: String?, error: CastError)] = []
        // The clocks first: a member whose exchange breaks is out before the others are told who is in the group.
        var measured: [(order: Int, destination: Destination, clock: ClockProbe?)] = []
        for (order, destination) in destinations.enumerated() {
            guard case .receiver(let connection) = destination else {
                measured.append((order, destination, nil))
                continue
            }
            do throws(CastError) {
                measured.append((order, destination, try measureClock(of: connection)))
            } catch {
                connection.close()
                failures.append((order, printable(connection.welcome.name), connection.welcome.id, error))
            }
        }
        let names = measured.map { _, destination, _ in
            switch destination {
            case .receiver(let connection): printable(connection.welcome.name)
            case .speaker(let speaker, _): printable(speaker.name)
            }
        }
        var clocks: [ClockProbe?] = []
        var members: [Member] = []
        for (order, destination, clock) in measured {
            do throws(CastError) {
                switch destination {
                case .receiver(let connection):
                    do throws(CastError) {
                        let playback = try RemotePlayback.start(
                            file, over: connection, configDirectory: configDirectory, startTime: startTime,
                            volume: volume, autoplay: false, group: names, queue: queue)
                        members.append(
                            Member(
                                name: printable(connection.welcome.name), playback: playback, id: connection.welcome.id)
                        )
                    } catch {
                        connection.close()
                        throw error
                    }
                case .speaker(let speaker, let source):
                    let playback = try SpeakerPlayback.start(
                        source: source, on: speaker, volume: volume, startTime: startTime, autoplay: false)
                    members.append(Member(name: printable(speaker.name), playback: playback, id: nil))
                }
                clocks.append(clock)
            } catch {
                switch destination {
                case .receiver(let connection):
                    failures.append((order, printable(connection.welcome.name), connection.welcome.id, error))
                case .speaker(let speaker, _): failures.append((order, printable(speaker.name), nil, error))
                }
            }
        }
        failures.sort { $0.order < $1.order }
        guard !members.isEmpty else { throw failures[0].error }
        let group = GroupPlayback(
            members: members, clocks: clocks, file: file, configDirectory: configDirectory, reach: reach,
            onMemberChange: onMemberChange)
        for failure in failures { onMemberChange(.notAdded(failure.name, why: failure.error.message)) }
        group.shared.withLock { state in
            for index in members.indices { state.members[index].awaiting = .load }
            state.operating = true
        }
        for index in members.indices { group.startReader(index) }
        group.startClockTimer()
        if autoplay { group.scheduleResumeWhenReady() } else { group.waitUntilReady() }
        group.shared.withLock { $0.operating = false }
        // Looked for while the group plays: the receivers not reached before the start, and those whose clock
        // exchange broke (by id, as a lost member is).
        let broken = failures.compactMap { $0.error.kind == .connectionLost ? $0.id : nil }
        for receiver in absent { group.lookFor(receiver, rejoining: false) }
        for id in broken { group.lookFor(id, rejoining: true) }
        return group
    }

    /// The first measurement of a member's clock: 8 exchanges.
    private static func measureClock(of connection: ReceiverConnection) throws(CastError) -> ClockProbe {
        // The rate from 3 s of exchanges on: a member's clock may run 100 ppm off, and until its rate is known the
        // offset lags behind by that much a second (10 s, the estimator's default, is for one measurement's
        // accuracy, not for following).
        var probe = ClockProbe(
            exchanges: 8, estimator: ClockEstimator(window: Self.clockWindow, minimumRateSpan: Self.rateSpan))
        let measured: ClockProbe.Measurement?
        do {
            measured = try probe.measure(over: ReceiverClockTransport(connection: connection))
        } catch let error as CastError {
            throw error
        } catch {
            throw CastError(.connectionLost, "\(printable(connection.welcome.name)) broke the clock exchange: \(error)")
        }
        guard measured != nil else {
            throw CastError(.connectionLost, "\(printable(connection.welcome.name)) gave no believable clock")
        }
        return probe
    }

    private func startReader(_ index: Int) {
        startDetachedThread(name: "cast group member \(index)") { [self] in read(member: index) }
    }

    private func startClockTimer() {
        clockTimer.withLock { timer in
            timer.schedule(
                deadline: .now() + .milliseconds(Self.clockInterval), repeating: .milliseconds(Self.clockInterval))
            timer.setEventHandler { [self] in measureClocks() }
            timer.resume()
        }
    }

    /// A member's reader: events and clock replies until its connection ends or it finishes.
    private func read(member index: Int) {
        let playback = member(index).playback
        while true {
            let event: PlaybackEvent
            do {
                event = try playback.nextEvent { [self] reply, returned in
                    let exchange = shared.withLock { state -> ClockEstimator.Exchange? in
                        guard state.members[index].pendingTimeRequest == reply.sent else { return nil }
                        state.members[index].pendingTimeRequest = nil
                        return try? state.members[index].clock?.add(sent: reply.sent, reply: reply, returned: returned)
                    }
                    if let exchange, let log = GroupClockLog.configured { log.record(exchange, of: member(index).name) }
                }
            } catch {
                let mayRejoin = shared.withLock { state -> Bool in
                    guard !state.members[index].gone && !state.closed else { return false }
                    state.members[index].gone = true
                    state.queue.append(.lost(member: index, error))
                    return !state.isEmpty && !state.stopping
                }
                if mayRejoin, let id = member(index).id { lookFor(id, rejoining: true) }
                return
            }
            if case .joinRequest(let receiver) = event {
                requestJoin(receiver)
                continue
            }
            let finished = shared.withLock { state -> Bool in
                // A member taken out (`remove`) says no more: its stop's finish is not the group's.
                if state.members[index].removed { return true }
                var member = state.members[index]
                _ = member.snapshot.apply(event)
                switch (member.awaiting, event) {
                case (.load?, .playbackState(.paused)): member.awaiting = nil
                case (.pause?, .position) where member.snapshot.state == .paused: member.awaiting = nil
                case (.seek?, .playbackState(.seekingForward)), (.seek?, .playbackState(.seekingBackward)):
                    member.awaiting = .seek(sawSeeking: true)
                case (.seek(true)?, .position) where member.snapshot.state == .paused: member.awaiting = nil
                case (.ownSeek?, .position): member.awaiting = nil
                default: break
                }
                state.members[index] = member
                let leading = state.leader == index
                if case .finished = event {
                    // Out of the group at once: a control waiting for it must not wait any longer.
                    state.members[index].gone = true
                    state.lastFinish = event
                }
                state.queue.append(.event(member: index, event, leading: leading))
                if let reaction = Self.ownChange(of: index, event, in: &state) {
                    reactions.async { [self] in follow(reaction) }
                }
                if case .finished = event { return true }
                return false
            }
            if finished { return }
        }
    }

    /// What the group does when a member changed on its own.
    private enum Reaction {
        case pause, resume
        /// Seek every member to where this one seeked.
        case seek(member: Int)
    }

    /// A member's own change (not one a control of the group asked for): nil when the event is not one, or belongs
    /// to a control. Call inside the monitor.
    private static func ownChange(of index: Int, _ event: PlaybackEvent, in state: inout State) -> Reaction? {
        guard !state.operating, !state.closed, !state.members[index].gone, state.members[index].awaiting == nil,
            case .playbackState(let now) = event
        else { return nil }
        switch now {
        case .paused where state.intent == .playing: return .pause
        case .playing where state.intent == .paused: return .resume
        case .seekingForward, .seekingBackward:
            // Its position after the seek says where the group goes.
            state.members[index].awaiting = .ownSeek
            return .seek(member: index)
        default: return nil
        }
    }

    /// Carries out a reaction as the control it stands for.
    private func follow(_ reaction: Reaction) {
        switch reaction {
        case .pause: try? control(.pause)
        case .resume: try? control(.resume)
        case .seek(let index):
            // Wait for the member's position after its seek (or its leaving), then take the group there.
            let settled = { (state: State) in
                state.members[index].awaiting == nil || state.members[index].gone || state.closed
            }
            let position = shared.withLock(when: settled, timeout: Self.readyTimeout) { state -> Double? in
                state.members[index].awaiting = nil
                return state.members[index].gone ? nil : state.members[index].snapshot.position?.seconds
            }
            if let position { try? control(.seek(position: position, exact: true)) }
        }
    }

    // MARK: Joining

    /// Adds the receiver at the other end of `connection` (open, its key checked) to the group, which owns the
    /// connection from here. While the group plays, the member loads the media where the group will be a moment later
    /// and is scheduled to start when the group gets there; while it is paused, it waits paused at the group's
    /// position and resumes with it. Returns once it is scheduled (or paused in place); other controls wait meanwhile.
    /// - Throws: `CastError`: it broke the clock exchange or refused the media (the refusal), it was not ready in
    ///   time or could not catch up (`.playback`), or the group is over (`.connectionLost`).
    public func add(_ connection: ReceiverConnection) throws(CastError) {
        try join(connection)
    }

    private func join(_ connection: ReceiverConnection) throws(CastError) {
        let clock: ClockProbe
        do {
            clock = try Self.measureClock(of: connection)
        } catch {
            connection.close()
            throw error
        }
        try controlling.withLock { _ throws(CastError) in
            try operating { () throws(CastError) in try join(connection, clock) }
        }
    }

    /// Runs `body` as a control: what the members report meanwhile is its doing (`State.operating`). Call with
    /// `controlling` held.
    private func operating<Result>(_ body: () throws(CastError) -> Result) throws(CastError) -> Result {
        shared.withLock { $0.operating = true }
        defer { shared.withLock { $0.operating = false } }
        return try body()
    }

    /// The rest of a join, with `controlling` held.
    private func join(_ connection: ReceiverConnection, _ clock: ClockProbe) throws(CastError) {
        let joinAt = MonotonicClock.nanoseconds() + Int64(Self.joinLead * 1e9)
        let (timeline, position, volume, names, over) = shared.withLock {
            state -> (Timeline?, Double, (level: Double, muted: Bool)?, [String], Bool) in
            let leader = state.leader.map { state.members[$0].snapshot }
            let timeline = state.intent == .playing ? state.timeline : nil
            let position = timeline?.position(at: joinAt) ?? leader?.position?.seconds ?? 0
            let names = state.roster.indices.filter { state.isActive($0) }.map { state.roster[$0].name }
            return (timeline, position, leader?.volume, names, state.closed || state.isEmpty || state.stopping)
        }
        guard !over else {
            connection.close()
            throw CastError(.connectionLost, "the group is over")
        }
        let playback = try RemotePlayback.start(
            file, over: connection, configDirectory: configDirectory, startTime: position, volume: volume?.level,
            autoplay: false, group: names + [printable(connection.welcome.name)])
        if volume?.muted == true { try? playback.control(.mute(true)) }
        let index = shared.withLock { state -> Int in
            state.roster.append(
                Member(name: printable(connection.welcome.name), playback: playback, id: connection.welcome.id))
            var member = MemberState(clock: clock)
            member.awaiting = .load
            state.members.append(member)
            return state.roster.count - 1
        }
        startReader(index)
        waitUntilReady()
        guard let timeline else {
            if shared.withLock({ state in state.isActive(index) }) { return }
            throw CastError(.playback, "\(printable(connection.welcome.name)) was not ready in time")
        }
        // Ready, paused at some position: it starts when the group's timeline reaches that position, if that is far
        // enough ahead for the control to arrive; a member that was slower than that seeks further ahead.
        for attempt in 1...Self.joinAttempts {
            let scheduled = shared.withLock { state -> Int64? in
                guard state.isActive(index), let at = state.members[index].snapshot.position?.seconds else {
                    return nil
                }
                guard let instant = timeline.instant(of: at),
                    instant > MonotonicClock.nanoseconds() + Self.startMargin / 2,
                    let theirs = state.theirInstant(instant, member: index)
                else { return nil }
                state.members[index].anchor = instant
                return theirs
            }
            if let scheduled {
                try? playback.control(.resumeAt(scheduled))
                return
            }
            guard attempt < Self.joinAttempts, shared.withLock({ state in state.isActive(index) }) else { break }
            let later = MonotonicClock.nanoseconds() + Int64(Self.joinLead * Double(attempt + 1) * 1e9)
            send(
                .seek(position: timeline.position(at: later), exact: true), to: [index],
                awaiting: .seek(sawSeeking: false))
            waitUntilReady()
        }
        shared.withLock { state in state.members[index].gone = true }
        try? playback.control(.stop)
        throw CastError(.playback, "\(printable(connection.welcome.name)) could not catch up with the group")
    }

    /// Takes the receiver whose id is `receiverID` (its welcome's) out of the group while it plays: it is stopped and
    /// its connections closed, and the others play on undisturbed (the first one left leads). Says so through
    /// `onMemberChange` (`.left(name, why: "removed")`). Other controls wait meanwhile.
    /// - Throws: `CastError` `.noSuchReceiver` when no member still in the group has that id; `.usage` when it is the
    ///   last one (a group is never empty: stop it instead).
    public func remove(receiverID: String) throws(CastError) {
        let member = try controlling.withLock { _ throws(CastError) -> Member in
            let removed = shared.withLock { state -> Result<Member, CastError> in
                guard
                    let index = state.roster.indices.first(where: {
                        state.isActive($0) && state.roster[$0].id == receiverID
                    })
                else {
                    return .failure(CastError(.noSuchReceiver, "no member of the group has the id \(receiverID)"))
                }
                guard state.members.indices.contains(where: { $0 != index && state.isActive($0) }) else {
                    return .failure(CastError(.usage, "\(state.roster[index].name) is the last member of the group"))
                }
                state.members[index].gone = true
                state.members[index].removed = true
                state.members[index].awaiting = nil
                return .success(state.roster[index])
            }
            let member = try removed.get()
            try? member.playback.control(.stop)
            member.playback.close()
            return member
        }
        onMemberChange(.left(member.name, why: "removed"))
    }

    /// Carries out `action` on one member only (the receiver whose welcome's id is `receiverID`): its volume or mute,
    /// which belong to it, as with AirPlay 2 (each speaker has its slider; the group's `control(.volume)` sets them
    /// all). Timeline actions (pause, seek, rate, …) are the group's: `.usage`.
    /// - Throws: `CastError` `.noSuchReceiver` when no member still in the group has that id, `.usage` for an action
    ///   that is not a member's own, and the member's connection failing.
    public func control(_ action: PlaybackControl.Action, receiverID: String) throws(CastError) {
        switch action {
        case .volume, .mute: break
        default: throw CastError(.usage, "only a member's volume and mute are its own")
        }
        let playback = shared.withLock { state in
            state.roster.indices.first { state.isActive($0) && state.roster[$0].id == receiverID }.map {
                state.roster[$0].playback
            }
        }
        guard let playback else { throw CastError(.noSuchReceiver, "no member of the group has the id \(receiverID)") }
        try playback.control(action)
    }

    /// The ids of the Cast receivers in the group now (finished, lost and removed members left out), in the order they
    /// joined.
    public var receiverIDs: [String] {
        shared.withLock { state in state.roster.indices.filter { state.isActive($0) }.compactMap { state.roster[$0].id }
        }
    }

    /// The level the receiver whose welcome's id is `receiverID` last reported (0...1, muted); nil when it is not in
    /// the group or has reported none.
    public func volume(ofReceiver receiverID: String) -> (level: Double, muted: Bool)? {
        shared.withLock { state in
            state.roster.indices.first { state.isActive($0) && state.roster[$0].id == receiverID }
                .flatMap { state.members[$0].snapshot.volume }
        }
    }

    /// A member passed on a request to add `receiver` (`cast join kitchen --to "living room"` from anywhere): it is
    /// reached (`reach`: its key checked, as for any send) and joined on the reactions queue, one at a time.
    private func requestJoin(_ receiver: String) {
        let name = printable(receiver)
        guard let reach else { return onMemberChange(.notAdded(name, why: "this group cannot reach receivers")) }
        let key = receiver.lowercased()
        let accepted = shared.withLock { state -> Bool in
            guard state.pendingJoins.count < Self.maximumPendingJoins, !state.closed else { return false }
            return state.pendingJoins.insert(key).inserted
        }
        guard accepted else { return }
        reactions.async { [self] in
            defer { shared.withLock { state in _ = state.pendingJoins.remove(key) } }
            let connection: ReceiverConnection
            do throws(CastError) {
                connection = try reach(receiver)
            } catch {
                return onMemberChange(.notAdded(name, why: error.message))
            }
            let member = shared.withLock { state in
                state.roster.indices.contains { state.isActive($0) && state.roster[$0].id == connection.welcome.id }
            }
            guard !member else {
                connection.close()
                return onMemberChange(.notAdded(name, why: "it is in the group already"))
            }
            do throws(CastError) {
                try join(connection)
            } catch {
                return onMemberChange(.notAdded(name, why: error.message))
            }
            onMemberChange(.joined(printable(connection.welcome.name)))
        }
    }

    /// Looks for `receiver` (an id or a name, as `reach` takes it) once every `rejoinInterval`, on a thread of its
    /// own, and joins it to the group when it is found, for as long as the group lasts: a lost member by its id
    /// (`rejoining`: `.rejoined`), or a receiver that could not be reached before the start (`.joined`). The latter is
    /// given up when it refuses us for good (`.notAdded`: not paired, not a Cast receiver); a lost member is looked
    /// for whatever it answers, as the receiver it was.
    private func lookFor(_ receiver: String, rejoining: Bool) {
        guard let reach else { return }
        startDetachedThread(name: "cast group look-out") { [self] in
            while true {
                let over = shared.withLock(when: { $0.closed }, timeout: Self.rejoinInterval) { state in
                    state.closed || state.isEmpty || state.stopping
                }
                if over { return }
                let connection: ReceiverConnection
                do throws(CastError) {
                    connection = try reach(receiver)
                } catch {
                    guard rejoining || (error.kind != .usage && error.kind != .notAuthorised) else {
                        return onMemberChange(.notAdded(printable(receiver), why: error.message))
                    }
                    continue
                }
                // Named twice (an alias, say): in the group already.
                let member = shared.withLock { state in
                    state.roster.indices.contains { state.isActive($0) && state.roster[$0].id == connection.welcome.id }
                }
                if member { return connection.close() }
                do {
                    try join(connection)
                } catch {
                    continue
                }
                let name = printable(connection.welcome.name)
                onMemberChange(rejoining ? .rejoined(name) : .joined(name))
                return
            }
        }
    }

    /// Every `clockInterval`: one clock exchange with every member still in the group (their replies come through
    /// their readers); every `alignEvery`, while the group plays, where each member should be by its clock (`align`):
    /// the group time since the last scheduled start, at an instant given in the member's clock. Members trim their
    /// rate by it, so that boxes whose clocks run apart stay in step. Runs on the timer's queue only.
    private func measureClocks() {
        for (index, member) in shared.withLock({ state in state.roster }).enumerated() {
            guard
                shared.withLock({ state in
                    !state.members[index].gone && !state.closed && state.members[index].clock != nil
                })
            else { continue }
            // The stamp is recorded before the reply can arrive: under the lock, which the reader needs for it.
            shared.withLock { state in
                state.members[index].pendingTimeRequest = try? member.playback.requestTime() ?? nil
            }
        }
        guard ticks.wrappingAdd(1, ordering: .relaxed).newValue % Self.alignEvery == 0 else { return }
        // Never in the middle of a control: an alignment must belong to the timeline the member follows.
        controlling.withLock { _ in alignMembers() }
    }

    /// Tells every member where it should be by its clock (`align`). Call with `controlling` held.
    private func alignMembers() {
        let now = MonotonicClock.nanoseconds()
        let alignments = shared.withLock { state -> [(any GroupMemberPlayback, PlaybackControl.Action)] in
            guard state.intent == .playing, !state.operating else { return [] }
            return state.members.indices.compactMap { index in
                guard state.isActive(index), let anchor = state.members[index].anchor, now > anchor,
                    let theirs = state.theirInstant(now, member: index), state.members[index].clock != nil,
                    let elapsed = GroupTiming.elapsed(Double(now - anchor) / 1e9)
                else { return nil }
                return (state.roster[index].playback, .align(elapsed: elapsed, at: theirs))
            }
        }
        for (playback, action) in alignments { try? playback.control(action) }
        if let log = GroupClockLog.configured, !alignments.isEmpty {
            log.record(
                at: now,
                shared.withLock { state in
                    state.members.indices.compactMap { index in
                        guard state.isActive(index), let estimate = state.members[index].clock?.estimate else {
                            return nil
                        }
                        return (state.roster[index].name, estimate)
                    }
                })
        }
    }

    /// The next event of the group: the leader's, the finish when the last member finished.
    /// - Throws: `CastError` `.connectionLost` when the last member was lost.
    public func nextEvent() throws(CastError) -> PlaybackEvent {
        while true {
            let (item, over) = shared.withLock(when: { !$0.queue.isEmpty }) { state -> (Item, Bool) in
                return (state.queue.removeFirst(), state.isEmpty)
            }
            switch item {
            case .event(_, let event, _) where over:
                // The group is over: its finish is the last member's.
                if case .finished = event { return event }
                if shared.withLock({ state in state.queue.isEmpty }),
                    let finish = shared.withLock({ state in state.lastFinish })
                {
                    return finish
                }
            case .event(let index, .finished(let reason, let error, _), _):
                // Reaching the end a moment before the others is not leaving, nor stopping with the group.
                if reason != .playbackEnded && !shared.withLock({ state in state.stopping }) {
                    let why = "finished: \(reason.rawValue)\(error.map { " (\(printable($0)))" } ?? "")"
                    onMemberChange(.left(member(index).name, why: why))
                }
            case .event(_, .skipRequest(let move), _):
                return .skipRequest(move)  // `cast next` to any member: the queue is the sender's
            case .event(_, let event, let leading):
                if leading { return event }
            case .lost(let index, let error):
                if over {
                    if let finish = shared.withLock({ state in state.lastFinish }) { return finish }
                    throw error
                }
                onMemberChange(.left(member(index).name, why: "lost: \(error.message)"))
            }
        }
    }

    /// Carries out `action` on the whole group. `pause`, `stop`, the volume, mute and the others act at once on every
    /// member; `resume`, `seek` and `rate` go through a scheduled start (see the type's notes), so the call returns
    /// when every member is ready again (or left out after `readyTimeout`).
    /// - Throws: `CastError` `.connectionLost` only when no member is left to act on; `.usage` for a rate other than 1
    ///   while an AirPlay speaker is a member (it plays at normal speed only, and the others would leave it behind).
    public func control(_ action: PlaybackControl.Action) throws(CastError) {
        if case .rate(let rate) = action, rate != 1,
            shared.withLock({ state in
                state.roster.indices.contains { state.isActive($0) && state.roster[$0].playback is SpeakerPlayback }
            })
        {
            throw CastError(.usage, "an AirPlay speaker in the group plays at normal speed only")
        }
        try controlling.withLock { _ throws(CastError) in try operating { () throws(CastError) in try carryOut(action) }
        }
    }

    /// `control(_:)` with `controlling` held.
    private func carryOut(_ action: PlaybackControl.Action) throws(CastError) {
        switch action {
        case .resume, .resumeAt:
            // A group that plays has nothing to resume; one member resumed on its own is taken back in step.
            let paused = shared.withLock { state in
                state.intent == .paused || state.members.contains { !$0.gone && $0.snapshot.state == .paused }
            }
            if paused { regroup(at: nil, applying: nil, play: true) }
        case .seek(let position, _):
            regroup(at: position, applying: nil, play: shared.withLock { state in state.intent == .playing })
        case .rate:
            regroup(at: nil, applying: action, play: shared.withLock { state in state.intent == .playing })
        case .pause:
            shared.withLock { state in state.intent = .paused }
            sendToAll(.pause)
        case .stop:
            shared.withLock { state in state.stopping = true }
            sendToAll(.stop)
        default:
            sendToAll(action)
        }
        if shared.withLock({ state in state.isEmpty }) {
            throw CastError(.connectionLost, "no member of the group is left")
        }
    }

    /// The leader's position now (its last report moved on while playing).
    private func leaderPosition() -> Double {
        shared.withLock { state in
            state.leader.flatMap { state.members[$0].snapshot.position(now: Date().timeIntervalSince1970) } ?? 0
        }
    }

    /// Pauses every member (waiting until each says where it stopped), applies `action`, seeks every member to the
    /// same position (`position`, else where the leader stopped), waits until each is ready there, and when `play`,
    /// schedules their resume at one instant.
    private func regroup(at position: Double?, applying action: PlaybackControl.Action?, play: Bool) {
        let playing = shared.withLock { state in
            state.members.indices.filter { state.isActive($0) && state.members[$0].snapshot.state != .paused }
        }
        shared.withLock { state in state.intent = .paused }
        if !playing.isEmpty {
            send(.pause, to: playing, awaiting: .pause)
            waitUntilReady()
        }
        if let action { sendToAll(action) }
        let target = position ?? leaderPosition()
        send(.seek(position: target, exact: true), to: activeMembers(), awaiting: .seek(sawSeeking: false))
        waitUntilReady()
        if play { scheduleResumeWhenReady() }
    }

    private func activeMembers() -> [Int] {
        shared.withLock { state in state.members.indices.filter { state.isActive($0) } }
    }

    private func sendToAll(_ action: PlaybackControl.Action) { send(action, to: activeMembers(), awaiting: nil) }

    private func send(_ action: PlaybackControl.Action, to indices: [Int], awaiting: Awaiting?) {
        for index in indices {
            shared.withLock { state in state.members[index].awaiting = awaiting }
            do {
                try member(index).playback.control(action)
            } catch {
                // Its reader sees the connection end and takes it out of the group.
                shared.withLock { state in state.members[index].awaiting = nil }
            }
        }
    }

    /// Waits until no member still in the group awaits anything; leaves out (stops) the members not ready within
    /// `readyTimeout`.
    private func waitUntilReady() {
        let waiting = { (state: State) in
            state.members.indices.filter { state.isActive($0) && state.members[$0].awaiting != nil }
        }
        let late = shared.withLock(when: { waiting($0).isEmpty || $0.closed }, timeout: Self.readyTimeout) {
            state -> [Int] in
            let late = waiting(state)
            for index in late { state.members[index].gone = true }
            return late
        }
        for index in late {
            try? member(index).playback.control(.stop)
            onMemberChange(.left(member(index).name, why: "not ready within \(Int(Self.readyTimeout)) s"))
        }
    }

    /// Once every member is ready: resume them all at one instant, `startMargin` from now on the group clock, each
    /// told the instant in its own clock.
    private func scheduleResumeWhenReady() {
        waitUntilReady()
        // Scheduled by each member's clock estimate: where the first exchanges cannot tell it closely (a path held
        // milliseconds each way, Wi-Fi's), after a little more of them (`GroupTiming.clockSettled`).
        shared.wait(
            until: { state in
                state.closed
                    || state.members.indices.allSatisfy { index in
                        guard state.isActive(index), let clock = state.members[index].clock else { return true }
                        return GroupTiming.clockSettled(uncertainty: clock.estimate?.uncertainty, span: clock.span)
                    }
            }, timeout: GroupTiming.startSpan + 1)
        // Far enough ahead for the member that buffers most (an AirPlay speaker: about 2.5 s).
        let lead = shared.withLock { state in
            state.roster.indices.filter { state.isActive($0) }.map { state.roster[$0].playback.startLead }.max()
        }
        let instant = MonotonicClock.nanoseconds() + max(Self.startMargin, lead ?? 0)
        let schedule = shared.withLock { state -> [(any GroupMemberPlayback, Int64)] in
            state.intent = .playing
            if let leader = state.leader {
                // Every member is paused at the same position: the leader's says where the timeline begins.
                let snapshot = state.members[leader].snapshot
                state.timeline = Timeline(
                    instant: instant, position: snapshot.position?.seconds ?? 0,
                    rate: snapshot.rate > 0 ? snapshot.rate : 1)
            }
            return state.members.indices.compactMap { index -> (any GroupMemberPlayback, Int64)? in
                guard state.isActive(index), let theirs = state.theirInstant(instant, member: index) else { return nil }
                state.members[index].anchor = instant
                return (state.roster[index].playback, theirs)
            }
        }
        for (playback, theirs) in schedule { try? playback.control(.resumeAt(theirs)) }
    }

    /// Closes every member's connections; their readers end.
    public func close() {
        clockTimer.withLock { $0.cancel() }
        shared.withLock { state in
            state.closed = true
        }
        for member in shared.withLock({ state in state.roster }) { member.playback.close() }
    }
}
