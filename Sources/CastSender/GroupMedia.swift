import CastProtocol

/// What a group plays: a local file, served by this process to each member over its own media connection, or an
/// http(s) URL, which each Cast member opens itself (the sender serves nothing; docs/multiroom.md, "A URL in a
/// group"). An AirPlay speaker is fed what `speakerAudio` decodes from it in either case.
public enum GroupMedia: Sendable {
    /// A regular file (members read it at their own offsets).
    case file(MediaFile)
    /// An http(s) URL; `credentials` says what each member is given for its server, by the member's connection
    /// (nil: none), as a single receiver is given them (CastKit gives stored credentials only to a receiver it paired).
    case url(
        String,
        credentials: @Sendable (_ member: ReceiverConnection) -> (username: String, password: String)? = { _ in nil })

    /// Whether `source` (what a user or a program named to play) is an http(s) URL a receiver opens itself, `.url`'s
    /// kind, rather than a file this process serves.
    public static func isURL(_ source: String) -> Bool {
        let lowered = source.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// Asks the receiver at the other end of `connection` to load it paused at `startTime` in a group of `group`
    /// (`autoplay` false: the group's schedule starts it). The playback owns the connection, and closes it on failure.
    func start(
        over connection: ReceiverConnection, configDirectory: String, startTime: Double?, volume: Double?,
        group: [String], queue: QueuePlace? = nil
    ) throws(CastError) -> RemotePlayback {
        switch self {
        case .file(let file):
            return try RemotePlayback.start(
                file, over: connection, configDirectory: configDirectory, startTime: startTime, volume: volume,
                autoplay: false, group: group, queue: queue)
        case .url(let url, let credentials):
            let given = credentials(connection)
            return try RemotePlayback.start(
                url: url, username: given?.username, password: given?.password, over: connection, startTime: startTime,
                volume: volume, autoplay: false, group: group, queue: queue)
        }
    }
}
