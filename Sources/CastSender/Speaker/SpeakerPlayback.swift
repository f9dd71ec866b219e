public import CastProtocol
import CastRAOP
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Plays a local file on an AirPlay 1 speaker (RAOP: shairport-sync, AirPort Express, many AV receivers): the
/// audio is decoded here (any file FFmpeg reads; a video file sends its audio), converted to 44.1 kHz 16-bit
/// stereo and streamed in real time as uncompressed, unencrypted L16 over RTP.
///
/// Events use the vocabulary of a Cast receiver's (`playbackState`, `position`, `volume`, `finished`), so a
/// program follows either the same way. The position is what the speaker plays: what was sent, less the
/// speaker's buffer (`SpeakerStream.speakerLatency`).
///
/// Thread-safety: thread-safe. `nextEvent` blocks its caller; `control` and `close` may be called from any
/// thread. The stream runs on threads of its own.
public final class SpeakerPlayback: Sendable {
    /// The speaker's name, as shown by `cast list`.
    public let speakerName: String
    /// The media's duration, when known.
    public let duration: Double?
    /// The volume set at the start (0...1): the one asked for, or 1 (unattenuated).
    public let initialVolume: Double
    private let stream: SpeakerStream

    private init(speakerName: String, duration: Double?, initialVolume: Double, stream: SpeakerStream) {
        self.speakerName = speakerName
        self.duration = duration
        self.initialVolume = initialVolume
        self.stream = stream
    }

    /// Connects to `speaker` (a `ReceiverDescription` of kind `.speaker`), sets up the stream (ANNOUNCE, SETUP,
    /// RECORD, then the volume: `volume` 0...1, or 1) and starts streaming `source`'s audio from `startTime`.
    ///
    /// With `autoplay` false nothing is sent yet: the playback reports `paused` at `startTime` and starts at the
    /// instant a `resumeAt` gives, an instant of this process's `MonotonicClock` (the speaker's timing server is this
    /// process, so the speaker keeps that clock): how a group starts it in step with its other members.
    /// - Throws: `CastError` `.connectionLost` when the speaker cannot be reached or breaks the protocol, `.busy`
    ///   when it plays for another sender, `.notAuthorised` when it wants a password.
    public static func start(
        source: any PCMSource, on speaker: ReceiverDescription, volume: Double? = nil, startTime: Double? = nil,
        autoplay: Bool = true
    ) throws(CastError) -> SpeakerPlayback {
        let stream = try SpeakerStream.open(
            reader: source, speaker: speaker, volume: volume, startTime: startTime, autoplay: autoplay)
        return SpeakerPlayback(
            speakerName: speaker.name, duration: source.duration, initialVolume: volume ?? 1, stream: stream)
    }

    /// Plays the file at `path` on `speaker`, decoded by the helper process `cast-decode` (`PCMDecoderProcess`):
    /// for programs that link no FFmpeg, such as `cast`. CastKit's players decode in process.
    /// - Throws: `CastError` `.playback` when the file has no audio FFmpeg can decode, else as
    ///   `start(source:on:volume:)`.
    public static func start(path: String, on speaker: ReceiverDescription, volume: Double? = nil) throws(CastError)
        -> SpeakerPlayback
    {
        let source: PCMDecoderProcess
        do {
            source = try PCMDecoderProcess.open(path)
        } catch {
            throw CastError(.playback, "cannot play the audio of \(path): \(error.message)")
        }
        return try start(source: source, on: speaker, volume: volume)
    }

    /// The next event; waits as long as it takes.
    /// - Throws: `CastError` `.connectionLost` when the speaker went away (or after the last event).
    public func nextEvent() throws(CastError) -> PlaybackEvent {
        try stream.nextEvent()
    }

    /// Pause (FLUSH), resume (at once, or at an instant of this process's `MonotonicClock`: `resumeAt`), stop
    /// (TEARDOWN), seek, volume or mute. A rate other than 1 is refused; `align` has nothing to do (the stream is
    /// paced by the clock the speaker follows).
    /// - Throws: `CastError` `.usage` for a rate change.
    public func control(_ action: PlaybackControl.Action) throws(CastError) {
        if case .rate(let rate) = action, rate != 1 {
            throw CastError(.usage, "an AirPlay speaker plays at normal speed only")
        }
        stream.enqueue(action)
    }

    /// Stops the stream (TEARDOWN when it still runs) and waits briefly for it to end.
    public func close() {
        stream.close()
    }
}
