public import CastProtocol
import CastRAOP

/// Playback at the other end of the network, as a sender sees it: a Cast receiver (`RemotePlayback`), an AirPlay
/// speaker (`SpeakerPlayback`) or a group of them (`GroupPlayback`). The pull side of the one vocabulary of playback
/// (docs/architecture.md): events are taken in order (`nextEvent`), and a control returns once it is sent, or throws
/// when the connection failed. CastKit turns one into a `PlaybackDriver` (`RemoteMoviePlayback`,
/// `GroupMoviePlayback`); `cast` follows one as it is.
public protocol SenderPlayback: AnyObject, Sendable {
    /// The next event, in order; blocks until there is one.
    /// - Throws: `CastError` `.connectionLost` when the connection ended before the playback finished.
    func nextEvent() throws(CastError) -> PlaybackEvent
    /// Carries out `action` (a `resumeAt` instant is in the receiver's clock).
    /// - Throws: `CastError` when it could not be sent (or was refused).
    func control(_ action: PlaybackControl.Action) throws(CastError)
    /// Ends the connections; a reader waiting in `nextEvent` wakes with an error.
    func close()
}

/// What a group (`GroupPlayback`) needs of one of its members: the wire's control actions in, playback events out,
/// and a clock it can schedule by. A Cast receiver (`RemotePlayback`) keeps a clock of its own, which the group measures
/// over its connection and converts each instant into; an AirPlay speaker (`SpeakerPlayback`) keeps the group's: this
/// process is its timing server and tells it, in sync packets, at which instant of that clock each frame is heard.
///
/// Thread-safety: one thread takes events; controls, time requests and `close` come from any thread.
protocol GroupMemberPlayback: SenderPlayback {
    /// The level it started at (0...1, muted).
    var levelAtStart: (level: Double, muted: Bool) { get }
    /// How far ahead of the instant its first scheduled start must be told (nanoseconds): what it buffers before
    /// playing.
    var startLead: Int64 { get }
    /// How far ahead of the instant a later scheduled start (a resume, after a seek) must be told (nanoseconds).
    var resumeLead: Int64 { get }
    /// The next event; each time reply on the way goes to `timeReply` with its arrival stamp (CLOCK_MONOTONIC ns).
    func nextEvent(timeReply: ((TimeReply, Int64) -> Void)?) throws(CastError) -> PlaybackEvent
    /// Sends a time request and returns its stamp; nil for a member that keeps the group's clock (nothing to measure).
    func requestTime() throws(CastError) -> Int64?
    /// After its finish: the control connection handed back for the group's next file (a Cast receiver), or nil (a
    /// speaker, whose session is closed: the next file is a session of its own).
    func release() -> ReceiverConnection?
}

extension RemotePlayback: SenderPlayback {}
extension SpeakerPlayback: SenderPlayback {}
extension GroupPlayback: SenderPlayback {}

extension RemotePlayback: GroupMemberPlayback {
    var levelAtStart: (level: Double, muted: Bool) { initialVolume }
    /// castd needs the control to arrive and its audio output to wake: the group's own margin covers it.
    var startLead: Int64 { 0 }
    var resumeLead: Int64 { 0 }
    func requestTime() throws(CastError) -> Int64? { try sendTimeRequest() }
    func release() -> ReceiverConnection? { handBack() }
}

extension SpeakerPlayback: GroupMemberPlayback {
    var levelAtStart: (level: Double, muted: Bool) { (initialVolume, false) }
    var startLead: Int64 { Self.groupStartLead }
    var resumeLead: Int64 { Self.groupResumeLead }

    /// The lead of its first start in a group: the speaker plays a frame its latency (2 s) after the sync packets say
    /// it is now, and the frames are sent a little ahead of that (with lead-in silence), as when it plays alone.
    static let groupStartLead = SpeakerStream.speakerLatency + SpeakerStream.lead + leadIn + 100_000_000

    /// A resume needs much less: the audio of the run is sent at once (faster than it plays, `SpeakerStream`), so it
    /// waits for nothing but its way to the speaker and the speaker's own output buffer (shairport-sync's ALSA
    /// default: 0.15 s, its output starting some 72 ms late), counted from the lead-in silence heard before the run:
    /// 0.5 s, about the group's own margin (0.4 s) and so as fast as a group without a speaker. A speaker that buffers
    /// its output longer hears the first moments of the run late, and drops them to stay in step.
    static let groupResumeLead = leadIn + 350_000_000

    /// The lead-in silence sent before each run (ns).
    private static let leadIn =
        Int64(SpeakerStream.leadInFrames) * 1_000_000_000 / Int64(SpeakerAnnouncement.sampleRate)

    func nextEvent(timeReply: ((TimeReply, Int64) -> Void)?) throws(CastError) -> PlaybackEvent { try nextEvent() }
    func requestTime() throws(CastError) -> Int64? { nil }

    func release() -> ReceiverConnection? {
        close()
        return nil
    }
}
