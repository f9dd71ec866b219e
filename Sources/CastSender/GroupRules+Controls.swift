import CastBase
import CastProtocol

extension GroupRules {
    /// A control of the group, carried out one at a time: from the program (`ticket`, completed when done), or the
    /// group following a member's own change (no ticket).
    struct Operation: Sendable {
        enum Kind: Sendable, Equatable {
            /// The first start: every member loads paused; with `autoplay`, they are scheduled to resume.
            case start(autoplay: Bool)
            case pause
            case stop
            /// An action every member carries out at once (the volume, mute, subtitles…).
            case everyMember(PlaybackControl.Action)
            /// Resume in step (a member resumed on its own is taken back in step).
            case resume
            case seek(Double)
            /// A rate change: applied while every member is paused, then a scheduled start.
            case rate(PlaybackControl.Action)
            /// A member seeked on its own: wait for its position, then seek the group there.
            case followSeek(member: Int)
            /// A member joins while the group plays (or waits paused with it); `lookout`: the receiver it was looked
            /// for as.
            case join(member: Int, purpose: Purpose, lookout: String?)
            /// A member that plays already is made the group's timeline (`adopt`).
            case adopt(member: Int)
        }

        enum Phase: Sendable, Equatable {
            case begin
            /// Every member playing was told to pause.
            case pausing
            /// Every member was told to seek to one position.
            case seeking
            /// Waiting for every member to be ready (loaded, or a member's own seek settled).
            case ready
            /// A joining member is loading the media.
            case loading
            /// A joining member ready, scheduled or seeking further ahead (its attempt).
            case catchingUp(attempt: Int)
        }

        var ticket: Int?
        var kind: Kind
        var phase = Phase.begin
        /// Waiting for the members until this instant (our clock); nil: not waiting.
        var deadline: Int64?
        /// A scheduled start follows the seek (a regroup).
        var play = false
        /// A join: the group's timeline when it began (nil: the group was paused).
        var timeline: Timeline?
        /// A join: whether the group was muted, which the member is too once loaded.
        var muted = false
        /// A join: the group's rate, which the member is set to once loaded (before it is scheduled).
        var rate = 1.0
        /// Why it failed, when a report said so.
        var failure: CastError?

        init(ticket: Int?, kind: Kind) {
            self.ticket = ticket
            self.kind = kind
        }
    }

    // MARK: Controls from the program

    /// The first start (`ticket` completes when every member is ready, and scheduled with `autoplay`).
    mutating func start(autoplay: Bool, ticket: Int, now: Now) -> [Action] {
        enqueue(Operation(ticket: ticket, kind: .start(autoplay: autoplay)), now: now)
    }

    /// Carries out `action` on the whole group (`ticket` completes when done): `pause`, `stop` and the others at
    /// once on every member; `resume`, `seek` and `rate` through a scheduled start.
    /// - Throws: `CastError` `.usage` for a rate other than 1 while an AirPlay speaker is a member (it plays at normal
    ///   speed only); `.busy` when too many controls wait.
    mutating func control(_ action: PlaybackControl.Action, ticket: Int, now: Now) throws(CastError) -> [Action] {
        if case .rate(let rate) = action, rate != 1, activeMembers.contains(where: { members[$0].isSpeaker }) {
            throw CastError(.usage, "an AirPlay speaker in the group plays at normal speed only")
        }
        guard queued.count < timing.maximumQueuedControls else {
            throw CastError(.busy, "too many controls of the group are waiting")
        }
        let kind: Operation.Kind
        switch action {
        case .resume, .resumeAt: kind = .resume
        case .seek(let position, _): kind = .seek(position)
        case .rate: kind = .rate(action)
        case .pause: kind = .pause
        case .stop: kind = .stop
        default: kind = .everyMember(action)
        }
        return enqueue(Operation(ticket: ticket, kind: kind), now: now)
    }

    /// `action` on one member only (the receiver whose id is `receiverID`): its volume or mute, which belong to it.
    /// - Throws: `CastError` `.usage` for an action that is not a member's own, `.noSuchReceiver` when no member has
    ///   that id.
    func control(_ action: PlaybackControl.Action, receiverID: String) throws(CastError) -> [Action] {
        switch action {
        case .volume, .mute: break
        default: throw CastError(.usage, "only a member's volume and mute are its own")
        }
        guard let index = member(receiverID: receiverID) else {
            throw CastError(.noSuchReceiver, "no member of the group has the id \(receiverID)")
        }
        return [.send(member: index, action)]
    }

    /// Takes the member whose id is `receiverID` out of the group: it is stopped and its connections closed.
    /// - Throws: `CastError` `.noSuchReceiver` when no member has that id; `.usage` when it is the last one.
    mutating func remove(receiverID: String, now: Now) throws(CastError) -> [Action] {
        guard let index = member(receiverID: receiverID) else {
            throw CastError(.noSuchReceiver, "no member of the group has the id \(receiverID)")
        }
        guard activeMembers.count > 1 else {
            throw CastError(.usage, "\(members[index].name) is the last member of the group")
        }
        members[index].standing = .gone
        members[index].removed = true
        members[index].awaiting = nil
        return [
            .send(member: index, .stop), .close(member: index), .announce(.left(members[index].name, why: "removed")),
        ]
            + advance(now: now)
    }

    /// The program adds a receiver it reached and measured (`ticket` completes when it plays in step, or failed).
    /// Returns its number, by which the driver keeps its connection.
    mutating func add(_ arrival: Arrival, ticket: Int, now: Now) -> (member: Int, actions: [Action]) {
        let index = arrive(arrival)
        let operation = Operation(ticket: ticket, kind: .join(member: index, purpose: .add, lookout: nil))
        return (index, enqueue(operation, now: now))
    }

    private mutating func arrive(_ arrival: Arrival) -> Int {
        members.append(
            Member(
                name: arrival.name, id: arrival.id, lookedForAs: arrival.lookedForAs ?? arrival.id,
                startLead: arrival.startLead, resumeLead: arrival.resumeLead, isSpeaker: arrival.isSpeaker,
                standing: .candidate, clock: arrival.clock))
        return members.count - 1
    }

    // MARK: Looking for receivers

    /// Receivers not reached at the start, looked for from the first tick on.
    mutating func lookFor(absent receivers: [String], now: Now) {
        guard canReach else { return }
        for receiver in receivers { lookouts.append(Lookout(receiver: receiver, purpose: .absent, due: now.clock)) }
    }

    /// Lost members' ids whose clock exchange broke at the start: looked for as lost members are.
    mutating func lookFor(lost ids: [String], now: Now) {
        guard canReach else { return }
        for id in ids {
            lookouts.append(Lookout(receiver: id, purpose: .rejoin, due: now.clock + timing.rejoinInterval))
        }
    }

    /// A member passed on a request to add `receiver`: it is looked for once. The request comes from the wire, so it
    /// may name a receiver this sender finds or has paired (a name or an id), never an address (`Handoff.refusal`):
    /// else a paired sender could have the group connect to any address and serve it the media.
    mutating func requestJoin(_ receiver: String, now: Now) -> [Action] {
        if let why = Handoff.refusal(of: receiver) { return [.announce(.notAdded(printable(receiver), why: why))] }
        guard canReach else {
            return [.announce(.notAdded(printable(receiver), why: "this group cannot reach receivers"))]
        }
        let key = receiver.lowercased()
        guard !closed, lookouts.filter({ $0.purpose == .request }).count < timing.maximumPendingJoins,
            !lookouts.contains(where: { $0.receiver.lowercased() == key })
        else { return [] }
        lookouts.append(Lookout(receiver: receiver, purpose: .request, due: now.clock, trying: true))
        return [.lookFor(receiver)]
    }

    /// The receivers due to be looked for; none once the group is over.
    mutating func lookOut(now: Now) -> [Action] {
        guard !isOver else {
            clearLookouts()
            return []
        }
        var actions: [Action] = []
        for index in lookouts.indices where !lookouts[index].trying && lookouts[index].due <= now.clock {
            lookouts[index].trying = true
            actions.append(.lookFor(lookouts[index].receiver))
        }
        return actions
    }

    /// `receiver` was reached and its clock measured: it joins (unless it is in the group already). Returns its
    /// number, by which the driver keeps its connection (closed at once when it is not wanted).
    mutating func found(_ receiver: String, _ arrival: Arrival, now: Now) -> (member: Int, actions: [Action]) {
        let index = arrive(arrival)
        guard let lookout = lookouts.firstIndex(where: { $0.receiver == receiver }), !isOver else {
            members[index].standing = .gone
            return (index, [.close(member: index)])
        }
        // Named twice (an alias, say): in the group already (a speaker, which has no id, by its name).
        let twice =
            arrival.id.map { member(receiverID: $0) != nil }
            ?? activeMembers.contains { members[$0].isSpeaker && members[$0].name == arrival.name }
        if twice {
            members[index].standing = .gone
            let purpose = lookouts.remove(at: lookout).purpose
            let said: [Action] =
                purpose == .request
                ? [.announce(.notAdded(printable(receiver), why: "it is in the group already"))] : []
            return (index, [.close(member: index)] + said)
        }
        let purpose = lookouts[lookout].purpose
        // A speaker is fed the file from here: only one the user named (`--to`) joins, never one a request from the
        // wire names (joins only where a user pointed).
        if arrival.isSpeaker && purpose == .request {
            members[index].standing = .gone
            lookouts.remove(at: lookout)
            let why = "an AirPlay speaker joins only when named with --to"
            return (index, [.close(member: index), .announce(.notAdded(printable(receiver), why: why))])
        }
        return (
            index,
            enqueue(Operation(ticket: nil, kind: .join(member: index, purpose: purpose, lookout: receiver)), now: now)
        )
    }

    /// `receiver` could not be reached (or its clock measured): a lost member is looked for again whatever it
    /// answered; one absent at the start unless it refuses us for good; a requested one is not added.
    mutating func notFound(_ receiver: String, error: CastError, now: Now) -> [Action] {
        guard let index = lookouts.firstIndex(where: { $0.receiver == receiver }) else { return [] }
        switch lookouts[index].purpose {
        case .rejoin:
            lookouts[index].trying = false
            lookouts[index].due = now.clock + timing.rejoinInterval
            return []
        case .absent where error.kind != .usage && error.kind != .notAuthorised:
            lookouts[index].trying = false
            lookouts[index].due = now.clock + timing.rejoinInterval
            return []
        case .absent, .request, .add:
            lookouts.remove(at: index)
            return [.announce(.notAdded(printable(receiver), why: error.message))]
        }
    }

    // MARK: Joining members' reports

    /// The joining member loaded the media (it reports `paused` when ready).
    mutating func loaded(_ index: Int, now: Now) -> [Action] {
        guard members.indices.contains(index) else { return [] }
        // Left out meanwhile (not ready in time), or the group is over: it must not play on alone.
        guard members[index].standing == .loading, !closed, !ended else {
            members[index].standing = .gone
            return [.send(member: index, .stop), .close(member: index)]
        }
        members[index].standing = .member
        members[index].awaiting = .load
        var actions: [Action] = []
        if case .join(index, _, _)? = running?.kind {
            if running?.muted == true { actions.append(.send(member: index, .mute(true))) }
            // The group plays faster or slower: so does the member, from its scheduled start on.
            if let rate = running?.rate, rate != 1 { actions.append(.send(member: index, .rate(rate))) }
        }
        return actions + advance(now: now)
    }

    /// The joining member refused the media or could not be sent it.
    mutating func loadFailed(_ index: Int, error: CastError, now: Now) -> [Action] {
        guard members.indices.contains(index), members[index].standing == .loading else { return [] }
        members[index].standing = .gone
        if case .join(index, _, _)? = running?.kind { running?.failure = error }
        return [.close(member: index)] + advance(now: now)
    }

    // MARK: Carrying out

    /// Queues `operation` behind the one under way and carries out what can be.
    mutating func enqueue(_ operation: Operation, now: Now) -> [Action] {
        queued.append(operation)
        return advance(now: now)
    }

    /// Carries the control under way on as far as the members allow, then the next ones.
    mutating func advance(now: Now) -> [Action] {
        latest = now.clock
        var actions: [Action] = []
        while !closed && !ended {
            if running == nil {
                guard !queued.isEmpty else { break }
                running = queued.removeFirst()
            }
            guard waited(now: now, &actions) else { break }
            actions += step(now: now)
        }
        return actions
    }

    /// Whether the control under way waits no longer: every member is ready and every member's clock known well
    /// enough to schedule by (on a path held milliseconds each way, Wi-Fi's, a little more of the exchanges:
    /// `clocksUnsettled`), or the deadline passed (the late ones are left out).
    private mutating func waited(now: Now, _ actions: inout [Action]) -> Bool {
        guard let operation = running, let deadline = operation.deadline else { return true }
        let late = members.indices.filter {
            (isActive($0) && members[$0].awaiting != nil) || members[$0].standing == .loading
        }
        if late.isEmpty && (now.clock >= deadline || !clocksUnsettled) {
            running?.deadline = nil
            return true
        }
        guard now.clock >= deadline else { return false }
        running?.deadline = nil
        for index in late {
            if case .followSeek(index) = operation.kind, members[index].awaiting == .ownSeek {
                members[index].awaiting = nil  // its position never came: the group stays where it is
                continue
            }
            if case .adopt(index) = operation.kind, members[index].awaiting == .anchor {
                members[index].awaiting = nil  // no anchor came: it plays on, and is resumed in step instead
                continue
            }
            members[index].standing = .gone
            members[index].awaiting = nil
            let seconds = Int(timing.readyTimeout)
            actions += [
                .send(member: index, .stop),
                .announce(.left(members[index].name, why: "not ready within \(seconds) s")),
            ]
        }
        return true
    }

    /// Waits for the members from now on, up to `readyTimeout`.
    private mutating func wait(now: Now, then phase: Operation.Phase) {
        running?.phase = phase
        running?.deadline = now.clock + (GroupTiming.nanoseconds(timing.readyTimeout) ?? 0)
    }

    /// One step of the control under way (it waits again, or it is done).
    private mutating func step(now: Now) -> [Action] {
        guard let operation = running else { return [] }
        switch operation.kind {
        case .start(let autoplay):
            guard operation.phase == .begin else { return (autoplay ? scheduleResume(now: now) : []) + finish() }
            wait(now: now, then: .ready)
            return []
        case .pause:
            intent = .paused
            return toEveryMember(.pause) + finish()
        case .stop:
            stopping = true
            clearLookouts()
            return toEveryMember(.stop) + finish()
        case .everyMember(let action):
            return toEveryMember(action) + finish()
        case .resume, .seek, .rate:
            return regroup(operation, now: now)
        case .followSeek(let index):
            guard operation.phase == .begin else {
                guard isActive(index), let position = members[index].snapshot.position?.seconds else { return finish() }
                running = Operation(ticket: operation.ticket, kind: .seek(position))
                return []
            }
            wait(now: now, then: .ready)
            return []
        case .join(let index, _, _):
            return join(index, operation, now: now)
        case .adopt(let index):
            return adoptStep(index, operation, now: now)
        }
    }

    /// A resume, a seek or a rate change: pause every member, seek them all to one position, schedule their start.
    private mutating func regroup(_ operation: Operation, now: Now) -> [Action] {
        switch operation.phase {
        case .begin:
            switch operation.kind {
            case .resume:
                // A group that plays has nothing to resume; one member resumed on its own is taken back in step.
                let paused = intent == .paused || activeMembers.contains { members[$0].snapshot.state == .paused }
                guard paused else { return finish() }
                running?.play = true
            default:
                running?.play = intent == .playing
            }
            let playing = activeMembers.filter { members[$0].snapshot.state != .paused }
            intent = .paused
            wait(now: now, then: .pausing)
            return send(.pause, to: playing, awaiting: .pause)
        case .pausing:
            var actions: [Action] = []
            if case .rate(let action) = operation.kind { actions += toEveryMember(action) }
            var target = leader.flatMap { members[$0].snapshot.position(now: now.date) } ?? 0
            if case .seek(let position) = operation.kind { target = position }
            wait(now: now, then: .seeking)
            return actions
                + send(.seek(position: target, exact: true), to: activeMembers, awaiting: .seek(sawSeeking: false))
        default:
            return (operation.play ? scheduleResume(now: now) : []) + finish()
        }
    }

    /// Resumes every member at one instant, `startMargin` (or the largest member's lead) ahead, each told the instant
    /// in its own clock.
    private mutating func scheduleResume(now: Now) -> [Action] {
        let lead =
            activeMembers.map { members[$0].anchor == nil ? members[$0].startLead : members[$0].resumeLead }.max() ?? 0
        let instant = now.clock + max(timing.startMargin, lead)
        intent = .playing
        if let leader {
            // Every member is paused at the same position: the leader's says where the timeline begins.
            let snapshot = members[leader].snapshot
            timeline = Timeline(
                instant: instant, position: snapshot.position?.seconds ?? 0, rate: snapshot.rate > 0 ? snapshot.rate : 1
            )
        }
        return activeMembers.compactMap { index in
            guard let theirs = theirInstant(instant, member: index) else { return nil }
            members[index].anchor = instant
            return .send(member: index, .resumeAt(theirs))
        }
    }

    /// A member joining: it loads where the group will be a moment later, then starts when the group's timeline
    /// reaches the position it reports; a member too late for that seeks further ahead.
    private mutating func join(_ index: Int, _ operation: Operation, now: Now) -> [Action] {
        let name = members[index].name
        switch operation.phase {
        case .begin:
            guard !isOver else {
                members[index].standing = .gone
                return [.close(member: index)] + finish(CastError(.connectionLost, "the group is over"))
            }
            // A member whose first start needs a lead of its own (an AirPlay speaker's latency) loads that much
            // further ahead.
            let joinAt = now.clock + members[index].startLead + (GroupTiming.nanoseconds(timing.joinLead) ?? 0)
            let timeline = intent == .playing ? self.timeline : nil
            let leading = leader.map { members[$0].snapshot }
            let position = timeline?.position(at: joinAt) ?? leading?.position?.seconds ?? 0
            let rate = timeline?.rate ?? leading.map { $0.rate > 0 ? $0.rate : 1 } ?? 1
            // An AirPlay speaker plays at normal speed only: it cannot follow a group that plays faster or slower
            // (a lost one is looked for again, and rejoins once the group plays at 1×).
            if members[index].isSpeaker && rate != 1 {
                members[index].standing = .gone
                let why = "an AirPlay speaker plays at normal speed only; the group plays at \(rate)×"
                return [.close(member: index)] + finish(CastError(.usage, why))
            }
            running?.timeline = timeline
            running?.muted = leading?.volume?.muted ?? false
            running?.rate = rate
            members[index].standing = .loading
            wait(now: now, then: .loading)
            let names = activeMembers.map { members[$0].name } + [name]
            return [.load(member: index, position: position, volume: leading?.volume?.level, group: names)]
        case .loading:
            guard isActive(index) else {
                return finish(operation.failure ?? CastError(.playback, "\(name) was not ready in time"))
            }
            wait(now: now, then: .ready)
            return []
        case .ready:
            guard isActive(index) else { return finish(CastError(.playback, "\(name) was not ready in time")) }
            guard operation.timeline != nil else { return finish() }
            running?.phase = .catchingUp(attempt: 1)
            return []
        case .catchingUp(let attempt):
            return catchUp(index, operation, attempt: attempt, now: now)
        default:
            preconditionFailure("a join has no phase \(operation.phase)")
        }
    }

    /// A ready joining member is scheduled when the group's timeline reaches it far enough ahead; else it seeks
    /// further ahead (up to `joinAttempts`), else it leaves.
    private mutating func catchUp(_ index: Int, _ operation: Operation, attempt: Int, now: Now) -> [Action] {
        guard let timeline = operation.timeline, isActive(index) else {
            return finish(CastError(.playback, "\(members[index].name) was not ready in time"))
        }
        if let at = members[index].snapshot.position?.seconds, let instant = timeline.instant(of: at),
            instant > now.clock + max(timing.startMargin / 2, members[index].startLead),
            let theirs = theirInstant(instant, member: index)
        {
            members[index].anchor = instant
            return [.send(member: index, .resumeAt(theirs))] + finish()
        }
        guard attempt < timing.joinAttempts else {
            members[index].standing = .gone
            members[index].awaiting = nil
            return [.send(member: index, .stop)]
                + finish(CastError(.playback, "\(members[index].name) could not catch up with the group"))
        }
        let later =
            now.clock + members[index].startLead + (GroupTiming.nanoseconds(timing.joinLead * Double(attempt + 1)) ?? 0)
        wait(now: now, then: .catchingUp(attempt: attempt + 1))
        return send(
            .seek(position: timeline.position(at: later), exact: true), to: [index], awaiting: .seek(sawSeeking: false))
    }

    private mutating func send(_ action: PlaybackControl.Action, to indices: [Int], awaiting: Awaiting?) -> [Action] {
        indices.map { index in
            members[index].awaiting = awaiting
            return .send(member: index, action)
        }
    }

    private mutating func toEveryMember(_ action: PlaybackControl.Action) -> [Action] {
        send(action, to: activeMembers, awaiting: nil)
    }

    /// The control under way is done (`error`: it failed); says so, and a join's outcome.
    private mutating func finish(_ error: CastError? = nil) -> [Action] {
        guard let operation = running else { return [] }
        running = nil
        let failure = error ?? (isEmpty ? CastError(.connectionLost, "no member of the group is left") : nil)
        var actions: [Action] = operation.ticket.map { [.completed(ticket: $0, error: failure)] } ?? []
        if case .join(let index, let purpose, let receiver) = operation.kind {
            actions += joined(index, purpose: purpose, lookout: receiver, error: error)
        }
        return actions
    }

    /// What a join's outcome does to the lookout it came from: done, tried again later, or given up.
    private mutating func joined(_ index: Int, purpose: Purpose, lookout receiver: String?, error: CastError?)
        -> [Action]
    {
        guard let receiver, let lookout = lookouts.firstIndex(where: { $0.receiver == receiver }) else { return [] }
        let name = members[index].name
        guard let error else {
            lookouts.remove(at: lookout)
            switch purpose {
            case .rejoin: return [.announce(.rejoined(name))]
            case .absent, .request: return [.announce(.joined(name))]
            case .add: return []
            }
        }
        guard purpose == .request else {
            lookouts[lookout].trying = false
            lookouts[lookout].due = latest + timing.rejoinInterval
            return []
        }
        lookouts.remove(at: lookout)
        return [.announce(.notAdded(printable(receiver), why: error.message))]
    }
}
