internal import CALSA
public import CastProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The sender's sound for `cast mirror --audio PCM`: an ALSA capture PCM read in pieces of about 10 ms, 48 kHz
/// stereo S16 (the PCM converts when it can: `plug`), each piece a `MirrorSound` stamped with the time its first
/// sample was captured on the pictures' clock.
///
/// Thread-safety: not `Sendable`; one thread (cast-mirror's sound thread) opens and reads it.
public final class SoundCapture {
    /// Frames a second and channels asked for.
    public static let rate = 48000
    public static let channels = 2
    /// Frames a piece: 10 ms.
    public static let pieceFrames = 480

    private let pcm: OpaquePointer
    /// Whether reads wait for the sound (a card); false for a chain that ends in ALSA's `null` (the lab's `file`
    /// PCM over `null`, whose infile is a FIFO), which gives at once whatever it has: the capture then reads a piece
    /// every 10 ms by the monotonic clock, as the engine paces such a PCM for playback.
    private let pacesItself: Bool
    private var nextRead: UInt64?
    /// How far behind the clock a PCM that does not pace itself may be read before it starts again from now.
    static let maximumBehind: UInt64 = 500_000

    /// Opens `name` for capture.
    /// - Throws: `MirrorError` (a usage error) when the PCM cannot be opened or set to 48 kHz stereo S16.
    public init(name: String) throws(MirrorError) {
        var handle: OpaquePointer?
        guard snd_pcm_open(&handle, name, SND_PCM_STREAM_CAPTURE, 0) >= 0, let handle else {
            throw MirrorError("cannot open the sound capture \(name)", usage: true)
        }
        // 48 kHz stereo S16, a buffer of 40 ms: read every 10 ms it does not fill, and what it holds is what the sound
        // waits before it is sent.
        let status = snd_pcm_set_params(
            handle, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(Self.channels), UInt32(Self.rate), 1,
            40_000)
        guard status >= 0 else {
            snd_pcm_close(handle)
            throw MirrorError(
                "the sound capture \(name) does not take 48 kHz stereo: \(String(cString: snd_strerror(status)))",
                usage: true)
        }
        pcm = handle
        pacesItself = cast_pcm_ends_in_null(handle) == 0
    }

    deinit { snd_pcm_close(pcm) }

    /// Reads the next piece and stamps it: `now` is the pictures' clock in microseconds. Nil when the capture ended
    /// or failed beyond recovery.
    public func next(now: () -> UInt64) -> (captured: UInt64, sound: MirrorSound)? {
        // A PCM that does not pace itself is read as a card would capture: a piece every 10 ms, each stamped with the
        // moment it was due. Behind (the stream's writes waited for a picture), it catches up without pausing, as a
        // card's buffer holds what was captured meanwhile; behind by more than a card would hold, it starts again.
        var scheduled: UInt64?
        if !pacesItself {
            let pieceTime = UInt64(Self.pieceFrames * 1_000_000 / Self.rate)
            let time = now()
            var due = nextRead ?? time
            if due + Self.maximumBehind < time { due = time }
            if due > time {
                var pause = timespec(
                    tv_sec: Int((due - time) / 1_000_000), tv_nsec: Int((due - time) % 1_000_000) * 1000)
                nanosleep(&pause, nil)
            }
            nextRead = due + pieceTime
            scheduled = due
        }
        var samples = [UInt8](repeating: 0, count: Self.pieceFrames * Self.channels * 2)
        var done = 0
        while done < Self.pieceFrames {
            let n = samples.withUnsafeMutableBytes { bytes in
                snd_pcm_readi(
                    pcm, bytes.baseAddress! + done * Self.channels * 2, snd_pcm_uframes_t(Self.pieceFrames - done))
            }
            if n > 0 {
                done += Int(n)
            } else if n == 0 || n == -Int(EINTR) || n == -Int(EAGAIN) {
                continue
            } else if snd_pcm_recover(pcm, Int32(n), 1) < 0 {
                return nil
            }
        }
        // The piece's first sample was captured a piece's time, and what still waits in the capture buffer, ago.
        if let scheduled, let sound = MirrorSound(rate: Self.rate, channels: Self.channels, samples: samples) {
            return (scheduled, sound)
        }
        var waiting = snd_pcm_sframes_t(0)
        if snd_pcm_delay(pcm, &waiting) < 0 { waiting = 0 }
        let age = UInt64(Self.pieceFrames + max(Int(waiting), 0)) * 1_000_000 / UInt64(Self.rate)
        let time = now()
        guard let sound = MirrorSound(rate: Self.rate, channels: Self.channels, samples: samples) else { return nil }
        return (time > age ? time - age : 0, sound)
    }
}
