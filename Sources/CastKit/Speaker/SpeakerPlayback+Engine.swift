import CastMedia
import CastProtocol
public import CastSender
import Synchronization

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
/// Thread-safety: any thread; the reader (not `Sendable`: it is FFmpeg's state) is sent into a `Mutex` and used only
/// inside it, one call at a time (uncontended: one thread reads a stream).
final class EngineAudio: PCMSource {
    private let reader: Mutex<PCMReader>
    let duration: Double?
    init(_ reader: sending PCMReader) {
        duration = reader.duration
        self.reader = Mutex(reader)
    }
    func read(frames: Int) throws -> [Int16] { try reader.withLock { try $0.read(frames: frames) } }
    func seek(to seconds: Double) throws { try reader.withLock { try $0.seek(to: seconds) } }
}
