public import CastProtocol

/// The one way a program starts a group on the receivers a user chose: `cast send`/`cast queue` with several `--to`
/// and CastKit's `CastRoute.selection` of several receivers both come here.
extension GroupPlayback {
    /// A receiver a user chose for a group (a Cast receiver or an AirPlay speaker), and its connection when the program
    /// reached it already (the group owns it from here).
    public struct Choice: Sendable {
        /// The receiver as chosen.
        public var receiver: ReceiverDescription
        /// Its control connection, open and its key checked; nil: the group connects to it (a speaker needs none).
        public var connection: ReceiverConnection?

        /// A choice, reached (`connection`) or not.
        public init(_ receiver: ReceiverDescription, connection: ReceiverConnection? = nil) {
            self.receiver = receiver
            self.connection = connection
        }
    }

    /// Plays `file` in step on the receivers chosen: each Cast receiver not reached yet is connected to (one that
    /// cannot be is left out, said through `leftOut`, and looked for while the group plays, by its id or else its
    /// name, with `reach`, or with `joining` when given, which may reach an AirPlay speaker too, with its audio: it
    /// joins as a receiver does, its first start as far ahead as its latency needs); each AirPlay speaker is fed the
    /// audio `speakerAudio` decodes. Then as
    /// `start(_:to:configDirectory:…)`. Returns the group and which receiver as chosen each member's id is.
    /// - Throws: `CastError`: no receiver could be reached (the first one's failure), a speaker's audio could not be
    ///   had, or what `start(_:to:…)` throws; every connection is closed then.
    public static func start(
        _ file: MediaFile, choosing choices: [Choice],
        speakerAudio: (ReceiverDescription) throws(CastError) -> any PCMSource, configDirectory: String,
        senderName: String, startTime: Double? = nil, volume: Double? = nil, autoplay: Bool = true,
        absent: [String] = [], reach: Reaching?, joining: ReachingAny? = nil,
        queue: QueuePlace? = nil, leftOut: (ReceiverDescription, CastError) -> Void = { _, _ in },
        onMemberChange: @escaping @Sendable (MemberChange) -> Void
    ) throws(CastError) -> (group: GroupPlayback, chosen: [String: ReceiverDescription]) {
        try start(
            .file(file), choosing: choices, speakerAudio: speakerAudio, configDirectory: configDirectory,
            senderName: senderName, startTime: startTime, volume: volume, autoplay: autoplay, absent: absent,
            reach: reach, joining: joining, queue: queue, leftOut: leftOut, onMemberChange: onMemberChange)
    }

    /// `start(_:choosing:…)` for what `media` says: a file served to each member, or an http(s) URL each Cast member
    /// opens itself (the sender serves nothing), with a speaker fed what `speakerAudio` decodes from it.
    public static func start(
        _ media: GroupMedia, choosing choices: [Choice],
        speakerAudio: (ReceiverDescription) throws(CastError) -> any PCMSource, configDirectory: String,
        senderName: String, startTime: Double? = nil, volume: Double? = nil, autoplay: Bool = true,
        absent: [String] = [], reach: Reaching?, joining: ReachingAny? = nil,
        queue: QueuePlace? = nil, leftOut: (ReceiverDescription, CastError) -> Void = { _, _ in },
        onMemberChange: @escaping @Sendable (MemberChange) -> Void
    ) throws(CastError) -> (group: GroupPlayback, chosen: [String: ReceiverDescription]) {
        var destinations: [Destination] = []
        var chosen: [String: ReceiverDescription] = [:]
        var absent = absent
        var unreachable: CastError?
        do throws(CastError) {
            for choice in choices {
                if choice.receiver.kind == .speaker {
                    destinations.append(.speaker(choice.receiver, source: try speakerAudio(choice.receiver)))
                    continue
                }
                let connection: ReceiverConnection
                if let reached = choice.connection {
                    connection = reached
                } else {
                    do throws(CastError) {
                        connection = try ReceiverConnection.open(
                            choice.receiver, configDirectory: configDirectory, senderName: senderName)
                    } catch {
                        leftOut(choice.receiver, error)
                        unreachable = unreachable ?? error
                        absent.append(choice.receiver.id.isEmpty ? choice.receiver.name : choice.receiver.id)
                        continue
                    }
                }
                chosen[connection.welcome.id] = choice.receiver
                destinations.append(.receiver(connection))
            }
            if destinations.isEmpty, let unreachable { throw unreachable }
        } catch {
            for case .receiver(let connection) in destinations { connection.close() }
            for choice in choices { choice.connection?.close() }  // closing twice is harmless
            throw error
        }
        let group = try start(
            media, to: destinations, clocks: [:], configDirectory: configDirectory, startTime: startTime,
            volume: volume,
            autoplay: autoplay, absent: absent, reach: joining ?? anyOf(reach), queue: queue,
            onMemberChange: onMemberChange)
        return (group, chosen)
    }
}
