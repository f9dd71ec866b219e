import CastMedia
import CastProtocol
public import CastSender

extension SpeakerPlayback {
    /// Plays the file at `path` on `speaker`, decoded in this process by the engine (CastKit links it anyway).
    /// - Throws: `CastError` `.playback` when the file has no audio FFmpeg can decode, else as
    ///   `start(source:on:volume:)`.
    public static func start(decodingInProcess path: String, on speaker: ReceiverDescription, volume: Double? = nil)
        throws(CastError) -> SpeakerPlayback
    {
        let reader: PCMReader
        do {
            reader = try PCMReader(path: path, sampleRate: 44_100, channels: PCMPipeMessage.channels)
        } catch {
            throw CastError(.playback, "cannot play the audio of \(path): \(error)")
        }
        return try start(source: EngineAudio(reader), on: speaker, volume: volume)
    }
}

/// The engine's `PCMReader` as a speaker stream's source.
///
/// Thread-safety: as `PCMSource` (one thread at a time), which is `PCMReader`'s own rule.
final class EngineAudio: PCMSource {
    let reader: PCMReader
    init(_ reader: PCMReader) { self.reader = reader }
    var duration: Double? { reader.duration }
    func read(frames: Int) throws -> [Int16] { try reader.read(frames: frames) }
    func seek(to seconds: Double) throws { try reader.seek(to: seconds) }
}
