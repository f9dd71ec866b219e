public import CastProtocol

/// A queue on a group: the group goes on from one file to the next (docs/multiroom.md, "A queue on a group"). The
/// members that played a file to its end (or were stopped by a skip) keep their control connections and their clock
/// estimates for the next one, a member that joined late stays in, and a receiver still looked for is looked for by
/// the next file's group, not found twice.
extension GroupPlayback {
    /// What a group hands on to its queue's next file (`carryOver`); the next `start(_:continuing:…)` owns it, or
    /// `close` ends it.
    public struct Carried: Sendable {
        enum Member: Sendable {
            /// A Cast receiver: its control connection (idle, its session over) and its clock as measured so far.
            case receiver(ReceiverConnection, ClockProbe?)
            /// An AirPlay speaker: a session of its own for each file.
            case speaker(ReceiverDescription)
        }

        let members: [Member]
        /// The receivers the group was still looking for (ids of lost members, names or ids not reached yet).
        let lookedFor: [String]

        /// No member goes on (every one failed, was lost or was removed): the next file starts afresh.
        public var isEmpty: Bool { members.isEmpty }

        /// Closes the connections carried (the queue ends).
        public func close() {
            for case .receiver(let connection, _) in members { connection.close() }
        }
    }

    /// Once the group is over (its `finished` was taken from `nextEvent`), hands on what its queue's next file starts
    /// with: the members that finished with `playbackEnded` or `userExited`, in the order they joined. Their
    /// connections are the `Carried`'s from here (`close` leaves them open); call it once, before `close`.
    public func carryOver() -> Carried {
        let (taken, lookedFor) = shared.withLock { state in
            let (indices, lookedFor) = state.rules.carriedOver
            let taken = indices.compactMap { index -> (Int, any GroupMemberPlayback, ClockProbe?)? in
                guard let playback = state.playbacks.removeValue(forKey: index) else { return nil }
                return (index, playback, state.rules.members[index].clock)
            }
            return (taken, lookedFor)
        }
        // Outside the lock: a hand-back waits for the member's heartbeat thread to end.
        let joined = shared.withLock { $0.joinedSpeakers }
        let members = taken.compactMap { index, playback, clock -> Carried.Member? in
            if let connection = playback.release() { return .receiver(connection, clock) }
            return (speakers[index] ?? joined[index]).map { .speaker($0) }
        }
        return Carried(members: members, lookedFor: lookedFor)
    }

    /// Plays `media` on the group a queue's previous file played on (`carryOver`): each Cast receiver over its
    /// connection, its clock not measured again; each AirPlay speaker in a new session fed by `speakerAudio`; the
    /// receivers still looked for are looked for by this group. Then as `start(_:to:…)`.
    /// - Throws: `CastError`: a speaker's audio could not be had, or what `start(_:to:…)` throws (`.connectionLost`
    ///   when nothing was carried); every connection carried is closed then.
    public static func start(
        _ media: GroupMedia, continuing carried: Carried,
        speakerAudio: (ReceiverDescription) throws(CastError) -> any PCMSource, configDirectory: String,
        volume: Double? = nil, autoplay: Bool = true,
        reach: Reaching?, joining: ReachingAny? = nil, queue: QueuePlace? = nil,
        onMemberChange: @escaping @Sendable (MemberChange) -> Void
    ) throws(CastError) -> GroupPlayback {
        var destinations: [Destination] = []
        var clocks: [String: ClockProbe] = [:]
        do throws(CastError) {
            guard !carried.isEmpty else { throw CastError(.connectionLost, "no member of the group is left") }
            for member in carried.members {
                switch member {
                case .receiver(let connection, let clock):
                    destinations.append(.receiver(connection))
                    clocks[connection.welcome.id] = clock
                case .speaker(let speaker):
                    destinations.append(.speaker(speaker, source: try speakerAudio(speaker)))
                }
            }
        } catch {
            carried.close()
            throw error
        }
        return try start(
            media, to: destinations, clocks: clocks, configDirectory: configDirectory, startTime: nil,
            volume: volume,
            autoplay: autoplay, absent: carried.lookedFor, reach: joining ?? anyOf(reach), queue: queue,
            onMemberChange: onMemberChange)
    }
}
