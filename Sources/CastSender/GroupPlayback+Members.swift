import CastBase
public import CastProtocol

/// Starting a group, and the I/O of members arriving later (reaching them, their clock, their media): what the
/// driver does when the rules ask it to.
extension GroupPlayback {
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
        try start(
            .file(file), to: destinations, clocks: [:], configDirectory: configDirectory, startTime: startTime,
            volume: volume,
            autoplay: autoplay, absent: absent, reach: anyOf(reach), queue: queue, onMemberChange: onMemberChange)
    }

    /// How a group reaches a receiver by its id or name: a Cast receiver only.
    public typealias Reaching = @Sendable (_ receiver: String) throws(CastError) -> ReceiverConnection
    /// How a group reaches a receiver by its id or name: a Cast receiver, or an AirPlay speaker with its audio.
    public typealias ReachingAny = @Sendable (_ receiver: String) throws(CastError) -> Destination

    /// `reach` as a `ReachingAny`.
    static func anyOf(_ reach: Reaching?) -> ReachingAny? {
        guard let reach else { return nil }
        @Sendable func reachAny(_ receiver: String) throws(CastError) -> Destination {
            .receiver(try reach(receiver))
        }
        return reachAny
    }

    /// `start(_:to:…)`, with the clocks of receivers measured already (by their welcome's id: a queue's group going on
    /// to its next file keeps them), which are not measured again.
    static func start(
        _ media: GroupMedia, to destinations: [Destination], clocks: [String: ClockProbe], configDirectory: String,
        startTime: Double?, volume: Double?, autoplay: Bool, absent: [String], reach: ReachingAny?, queue: QueuePlace?,
        onMemberChange: @escaping @Sendable (MemberChange) -> Void
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
                if let clock = clocks[connection.welcome.id] {
                    measured.append((order, destination, clock))
                } else {
                    measured.append((order, destination, try measureClock(of: connection)))
                }
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
        var arrivals: [GroupRules.Arrival] = []
        var playbacks: [Int: any GroupMemberPlayback] = [:]
        var speakers: [Int: ReceiverDescription] = [:]
        for (order, destination, clock) in measured {
            do throws(CastError) {
                let playback: any GroupMemberPlayback
                var arrival: GroupRules.Arrival
                switch destination {
                case .receiver(let connection):
                    do throws(CastError) {
                        playback = try media.start(
                            over: connection, configDirectory: configDirectory, startTime: startTime, volume: volume,
                            group: names, queue: queue)
                    } catch {
                        connection.close()
                        throw error
                    }
                    arrival = GroupRules.Arrival(name: printable(connection.welcome.name), id: connection.welcome.id)
                case .speaker(let speaker, let source):
                    playback = try SpeakerPlayback.start(
                        source: source, on: speaker, volume: volume, startTime: startTime, autoplay: false)
                    arrival = GroupRules.Arrival(
                        name: printable(speaker.name), id: nil, lookedForAs: speaker.requested ?? speaker.name,
                        isSpeaker: true)
                    speakers[arrivals.count] = speaker
                }
                arrival.clock = clock
                arrival.startLead = playback.startLead
                arrival.resumeLead = playback.resumeLead
                playbacks[arrivals.count] = playback
                arrivals.append(arrival)
            } catch {
                switch destination {
                case .receiver(let connection):
                    failures.append((order, printable(connection.welcome.name), connection.welcome.id, error))
                case .speaker(let speaker, _): failures.append((order, printable(speaker.name), nil, error))
                }
            }
        }
        failures.sort { $0.order < $1.order }
        guard !arrivals.isEmpty else { throw failures[0].error }
        let group = GroupPlayback(
            rules: GroupRules(members: arrivals, canReach: reach != nil), playbacks: playbacks,
            names: arrivals.map(\.name), media: media, configDirectory: configDirectory, speakers: speakers,
            reach: reach,
            onMemberChange: onMemberChange)
        for failure in failures { onMemberChange(.notAdded(failure.name, why: failure.error.message)) }
        for (index, playback) in playbacks { group.startReader(index, playback) }
        group.startTimer()
        // Ready (and scheduled with `autoplay`): a member not ready in time is left out, so this does not fail.
        try? group.perform { rules, ticket, now in rules.start(autoplay: autoplay, ticket: ticket, now: now) }
        // Looked for while the group plays: the receivers not reached before the start, and those whose clock
        // exchange broke (by id, as a lost member is).
        let broken = failures.compactMap { $0.error.kind == .connectionLost ? $0.id : nil }
        group.feed { rules, now in
            rules.lookFor(absent: absent, now: now)
            rules.lookFor(lost: broken, now: now)
            return []
        }
        return group
    }

    /// The first measurement of a member's clock: 8 exchanges.
    static func measureClock(of connection: ReceiverConnection) throws(CastError) -> ClockProbe {
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

    /// A receiver as it arrives in the group.
    private static func arrival(_ connection: ReceiverConnection, clock: ClockProbe) -> GroupRules.Arrival {
        GroupRules.Arrival(name: printable(connection.welcome.name), id: connection.welcome.id, clock: clock)
    }

    /// Adds the receiver at the other end of `connection` (open, its key checked) to the group, which owns the
    /// connection from here. While the group plays, the member loads the media where the group will be a moment later
    /// and is scheduled to start when the group gets there; while it is paused, it waits paused at the group's
    /// position and resumes with it. Returns once it is scheduled (or paused in place); other controls wait meanwhile.
    /// - Throws: `CastError`: it broke the clock exchange or refused the media (the refusal), it was not ready in
    ///   time or could not catch up (`.playback`), or the group is over (`.connectionLost`).
    public func add(_ connection: ReceiverConnection) throws(CastError) {
        let clock: ClockProbe
        do {
            clock = try Self.measureClock(of: connection)
        } catch {
            connection.close()
            throw error
        }
        let now = Self.now()
        let ticket = shared.withLock { state -> Int in
            let ticket = state.nextTicket
            state.nextTicket += 1
            let (index, actions) = state.rules.add(Self.arrival(connection, clock: clock), ticket: ticket, now: now)
            state.connections[index] = connection
            dispatch(actions, in: &state)
            return ticket
        }
        try waitFor(ticket)
    }

    /// The rules asked for `receiver` (a lost member's id, a name not reached at the start or asked for by a
    /// member): reached (its key checked, as for any send) and measured here, on a look-out thread of its own; an AirPlay
    /// speaker keeps our clock (nothing to measure).
    func lookFor(_ receiver: String) {
        guard let reach else { return }
        let destination: Destination
        var clock: ClockProbe?
        do throws(CastError) {
            destination = try reach(receiver)
            if case .receiver(let connection) = destination {
                do throws(CastError) {
                    clock = try Self.measureClock(of: connection)
                } catch {
                    connection.close()
                    throw error
                }
            }
        } catch {
            return feed { rules, now in rules.notFound(receiver, error: error, now: now) }
        }
        let now = Self.now()
        shared.withLock { state in
            switch destination {
            case .receiver(let connection):
                guard let clock else { preconditionFailure("a receiver reached is measured") }
                let (index, actions) = state.rules.found(receiver, Self.arrival(connection, clock: clock), now: now)
                state.connections[index] = connection
                dispatch(actions, in: &state)
            case .speaker(let speaker, let source):
                let arrival = GroupRules.Arrival(
                    name: printable(speaker.name), id: nil, lookedForAs: receiver,
                    startLead: SpeakerPlayback.groupStartLead,
                    resumeLead: SpeakerPlayback.groupResumeLead, isSpeaker: true)
                let (index, actions) = state.rules.found(receiver, arrival, now: now)
                state.joiningSpeakers[index] = (speaker, source)
                dispatch(actions, in: &state)
            }
        }
    }

    /// The rules asked for the media on a joining member: paused at `position`, at the group's level.
    func load(_ index: Int, over connection: ReceiverConnection, at position: Double, volume: Double?, group: [String])
    {
        let playback: RemotePlayback
        do throws(CastError) {
            playback = try media.start(
                over: connection, configDirectory: configDirectory, startTime: position, volume: volume, group: group)
        } catch {
            connection.close()
            return feed { rules, now in rules.loadFailed(index, error: error, now: now) }
        }
        let now = Self.now()
        shared.withLock { state in
            state.playbacks[index] = playback
            dispatch(state.rules.loaded(index, now: now), in: &state)
        }
        startReader(index, playback)
    }

    /// The rules asked for the media on a joining AirPlay speaker: set up paused at `position`, at the group's level.
    func load(
        _ index: Int, _ joining: (speaker: ReceiverDescription, source: any PCMSource), at position: Double,
        volume: Double?
    ) {
        let playback: SpeakerPlayback
        do throws(CastError) {
            playback = try SpeakerPlayback.start(
                source: joining.source, on: joining.speaker, volume: volume, startTime: position, autoplay: false)
        } catch {
            return feed { rules, now in rules.loadFailed(index, error: error, now: now) }
        }
        let now = Self.now()
        shared.withLock { state in
            state.playbacks[index] = playback
            state.joinedSpeakers[index] = joining.speaker
            dispatch(state.rules.loaded(index, now: now), in: &state)
        }
        startReader(index, playback)
    }
}
