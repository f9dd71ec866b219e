import CastBase
import CastProtocol

/// A group made of a receiver that plays alone, which plays on (docs/multiroom.md, "A receiver that plays alone
/// becomes a group"): no stop, no reload. The rules ask it where its playback is anchored (`anchor`: castd answers
/// `scheduledStart` with an instant of its clock and the position it presents then); that, in our clock, is the
/// group's timeline, its `align`s count from it, and members added later join it as they join any playing group. A
/// member that does not answer in time (it stands: paused, seeking, stalled) is paused and resumed in step instead,
/// as a resume of the group is.
extension GroupRules {
    /// A group of one member that plays already (`snapshot`: what its events said so far), not loading anything: it
    /// awaits nothing, and the group's intent is what it does. `adopt` anchors the timeline on it.
    init(adopting arrival: Arrival, playing snapshot: PlaybackSnapshot, canReach: Bool, timing: Timing = Timing()) {
        self.init(members: [arrival], canReach: canReach, timing: timing)
        members[0].awaiting = nil
        members[0].snapshot = snapshot
        intent = snapshot.state == .paused ? .paused : .playing
    }

    /// Anchors the group's timeline on its first member, which plays (`ticket` completes once the timeline is known,
    /// or the member was resumed in step for want of an anchor). A paused group has no timeline to anchor: done at
    /// once (it resumes in step when told).
    mutating func adopt(ticket: Int, now: Now) -> [Action] {
        enqueue(Operation(ticket: ticket, kind: .adopt(member: 0)), now: now)
    }

    /// `theirs` (an instant of a member's clock) in our clock, when its clock is known (a member that keeps ours: the
    /// instant).
    func ourInstant(_ theirs: Int64, member index: Int) -> Int64? {
        guard let clock = members[index].clock else { return theirs }
        return clock.estimate.flatMap { GroupTiming.instant($0.ours(atTheirs: Double(theirs) / 1e9)) }
    }

    /// One step of an adoption: ask the anchor and wait for it (and for the member's clock to settle), then make it
    /// the timeline; without one, regroup as a resume does.
    mutating func adoptStep(_ index: Int, _ operation: Operation, now: Now) -> [Action] {
        switch operation.phase {
        case .begin:
            guard isActive(index), intent == .playing else { return adopted() }
            // Stalled or seeking: its clock stands, no anchor would come.
            guard members[index].snapshot.state == .playing else { return regroupInstead(operation) }
            members[index].reportedAnchor = nil
            members[index].awaiting = .anchor
            running?.phase = .ready
            running?.deadline = now.clock + (GroupTiming.nanoseconds(timing.anchorTimeout) ?? 0)
            return [.send(member: index, .anchor)]
        default:
            guard isActive(index) else { return adopted() }
            let rate = members[index].snapshot.rate > 0 ? members[index].snapshot.rate : 1
            if let reported = members[index].reportedAnchor, let ours = ourInstant(reported.at, member: index) {
                timeline = Timeline(instant: ours, position: reported.position, rate: rate)
                members[index].anchor = ours
                intent = .playing
                return adopted()
            }
            return regroupInstead(operation)
        }
    }

    /// No anchor (a castd that gave none in time, a member whose clock stands): it is paused, seeked to where it is
    /// and resumed at one instant, as a resume of the group is; the adoption's ticket completes with that.
    private mutating func regroupInstead(_ operation: Operation) -> [Action] {
        intent = .paused
        running = Operation(ticket: operation.ticket, kind: .resume)
        return []
    }

    /// The adoption is done.
    private mutating func adopted() -> [Action] {
        guard let operation = running else { return [] }
        running = nil
        return operation.ticket.map { [.completed(ticket: $0, error: nil)] } ?? []
    }
}
