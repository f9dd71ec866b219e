internal import CFFmpeg

/// Reads the audio of anything FFmpeg opens (a music file, or a video file's best audio stream) as interleaved
/// signed 16-bit PCM in host byte order, at a chosen rate and channel count (swresample): the input of senders
/// that send raw audio, such as an AirPlay speaker stream (44.1 kHz stereo).
///
/// Decoding runs on the caller's thread: `read` blocks while FFmpeg reads and decodes. Not for playback (that is
/// `Player`, which paces); this only converts, as fast as it is asked.
///
/// Thread-safety: not `Sendable`: one thread owns a reader; it may send it to another (`sending`), or keep it in a
/// `Mutex` (`EngineAudio` in CastKit).
public final class PCMReader {
    /// Output frames a second.
    public let sampleRate: Int
    /// Output channels (interleaved).
    public let channels: Int
    /// The input's duration in seconds, when the container knows it.
    public let duration: Double?

    private let demuxer: Demuxer
    private let decoder: Decoder
    private let resampler: Resampler
    private let streamIndex: Int32
    /// Converted samples not handed out yet, from `pendingStart` on.
    private var pending: [Int16] = []
    private var pendingStart = 0
    private var inputEnded = false
    private var drained = false
    /// After a seek: the position asked for (s), until the first decoded frame says how much before it the demuxer
    /// landed.
    private var seekTarget: Double?
    /// Output samples still to drop so that the first one handed out is the one at the position asked for.
    private var samplesToDrop = 0

    /// Opens `input` and its best audio stream.
    /// - Throws: `MediaError` when FFmpeg cannot open or probe it, or it has no audio stream with a decoder.
    public init(input: MediaInput, sampleRate: Int = 44_100, channels: Int = 2) throws {
        precondition(sampleRate > 0 && (1...8).contains(channels))
        let demuxer = try Demuxer(input: input, interrupt: Interrupt())
        guard let stream = demuxer.bestStream(AVMEDIA_TYPE_AUDIO) else {
            throw MediaError.other("the input has no audio stream")
        }
        // Only the audio stream is read: packets of the others are not even demuxed into memory for long.
        for index in 0..<Int(demuxer.context.pointee.nb_streams) where index != Int(stream.pointee.index) {
            demuxer.context.pointee.streams[index]?.pointee.discard = AVDISCARD_ALL
        }
        self.demuxer = demuxer
        let decoder = try Decoder(stream: stream)
        self.decoder = decoder
        self.resampler = Resampler(outputRate: sampleRate, outputChannels: channels, streamName: decoder.streamName)
        self.streamIndex = stream.pointee.index
        self.sampleRate = sampleRate
        self.channels = channels
        self.duration = demuxer.duration
    }

    /// Opens a local file.
    public convenience init(path: String, sampleRate: Int = 44_100, channels: Int = 2) throws {
        try self.init(input: .source(try FileSource(path: path)), sampleRate: sampleRate, channels: channels)
    }

    /// Up to `frames` frames (`frames × channels` samples), fewer only at the end; an empty array at the end.
    /// - Throws: `MediaError` when reading fails (a corrupt packet is skipped, as in playback).
    public func read(frames: Int) throws -> [Int16] {
        precondition(frames > 0)
        let wanted = frames * channels
        while pending.count - pendingStart < wanted && !drained {
            try decodeMore()
        }
        let available = min(wanted, pending.count - pendingStart)
        let out = Array(pending[pendingStart..<(pendingStart + available)])
        pendingStart += available
        if pendingStart > 65536 {
            pending.removeFirst(pendingStart)
            pendingStart = 0
        }
        return out
    }

    /// Moves to `seconds` into the input, exactly: the demuxer lands on the packet at or before it (a FLAC frame is
    /// 4096 samples, 85 ms at 48 kHz), and what is decoded before the position is dropped, so that a speaker in a
    /// group plays what the others play at the same instant.
    public func seek(to seconds: Double) throws {
        let target = max(0, seconds)
        try demuxer.seek(to: target)
        decoder.flush()
        resampler.reset()
        pending.removeAll()
        pendingStart = 0
        inputEnded = false
        drained = false
        seekTarget = target
        samplesToDrop = 0
    }

    /// Reads one packet of the audio stream and converts what it decodes; at the end, drains the decoder and
    /// the resampler.
    private func decodeMore() throws {
        if inputEnded {
            try decode(nil)
            if let error = decoder.undecodable(atEnd: true) { throw error }
            try resampler.convert(nil) { append($0) }
            drained = true
            return
        }
        let packet = Packet()
        guard try demuxer.read(into: packet) else {
            inputEnded = true
            return
        }
        guard packet.pointer.pointee.stream_index == streamIndex else { return }
        try decode(packet)
        // A stream whose packets all fail is an error, not a speaker that plays silence.
        if let error = decoder.undecodable(atEnd: false) { throw error }
    }

    /// Decodes `packet` (nil: drains the decoder) and converts every frame; the first failure is thrown.
    private func decode(_ packet: Packet?) throws {
        var failure: (any Error)?
        _ = decoder.decode(packet) { frame in
            if let target = seekTarget {
                // The first frame after a seek: drop from its start up to the target (output frames).
                seekTarget = nil
                let ts = frame.pointer.pointee.best_effort_timestamp
                if ts != cast_av_nopts_value() {
                    let start = Double(ts) * av_q2d(decoder.timeBase) - Double(demuxer.startTime) / Double(AV_TIME_BASE)
                    samplesToDrop = max(0, Int(((target - start) * Double(sampleRate)).rounded())) * channels
                }
            }
            do {
                try resampler.convert(frame) { append($0) }
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
    }

    private func append(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count / 2
        let dropped = min(samplesToDrop, count)
        samplesToDrop -= dropped
        pending.reserveCapacity(pending.count + count - dropped)
        for i in dropped..<count {
            pending.append(bytes.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self))
        }
    }
}
