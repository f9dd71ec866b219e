internal import CALSA
import Glibc

/// An ALSA playback PCM in S16_LE interleaved, opened at the rate nearest to the source's and the channel count nearest
/// to the one asked for (the engine downmixes to it: ALSA's own `plug` would only copy the first channels). Used by the
/// audio output thread only (opened on the demux thread before that thread starts).
final class AlsaDevice: @unchecked Sendable {
    // Invariant: after init, only the audio output thread calls into `pcm`.
    private let pcm: OpaquePointer
    /// The name it was opened with.
    let name: String
    /// The rate the device runs at (frames per second).
    let rate: Int
    /// The channel count the device takes.
    let channels: Int
    /// The speakers its channels feed, in its order: its channel map when it tells one, else ALSA's usual order.
    let speakers: SpeakerLayout
    /// The buffer and period sizes the device agreed to, in frames.
    let bufferFrames: Int
    let periodFrames: Int
    /// Whether the device plays in real time and so paces the writes itself (a sound card), rather than taking what it
    /// is given (`AudioClock`).
    let pacesItself: Bool
    /// Bytes per frame (S16: 2 per channel).
    var frameBytes: Int { channels * 2 }

    /// Opens `name` for playback, asking for `rate` and `channels` (1...8) and a buffer of about `bufferTime`
    /// microseconds (100 ms unless told; a mirrored screen's sound asks for less) in 4 periods. `clock` says who paces
    /// it; `.auto` decides by the PCM (`cast_pcm_ends_in_null`, CALSA).
    init(name: String, rate: Int, channels: Int, clock: AudioClock = .auto, bufferTime: UInt32 = 100_000) throws {
        var handle: OpaquePointer?
        try Self.check("snd_pcm_open(\(name))", snd_pcm_open(&handle, name, SND_PCM_STREAM_PLAYBACK, 0))
        guard let handle else { throw MediaError.other("snd_pcm_open(\(name)): no handle") }
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        var chosenRate = UInt32(rate)
        var chosenChannels = UInt32(channels)
        var buffer = snd_pcm_uframes_t(0)
        var period = snd_pcm_uframes_t(0)
        do {
            try Self.check("snd_pcm_hw_params_any", snd_pcm_hw_params_any(handle, params))
            try Self.check(
                "snd_pcm_hw_params_set_rate_resample", snd_pcm_hw_params_set_rate_resample(handle, params, 1))
            try Self.check(
                "snd_pcm_hw_params_set_access",
                snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED))
            try Self.check(
                "snd_pcm_hw_params_set_format(S16_LE)",
                snd_pcm_hw_params_set_format(handle, params, SND_PCM_FORMAT_S16_LE))
            try Self.check(
                "snd_pcm_hw_params_set_channels_near",
                snd_pcm_hw_params_set_channels_near(handle, params, &chosenChannels))
            try Self.check(
                "snd_pcm_hw_params_set_rate_near", snd_pcm_hw_params_set_rate_near(handle, params, &chosenRate, nil))
            var bufferTime = bufferTime
            try Self.check(
                "snd_pcm_hw_params_set_buffer_time_near",
                snd_pcm_hw_params_set_buffer_time_near(handle, params, &bufferTime, nil))
            var periods: UInt32 = 4
            _ = snd_pcm_hw_params_set_periods_near(handle, params, &periods, nil)
            try Self.check("snd_pcm_hw_params", snd_pcm_hw_params(handle, params))
            guard (1...8).contains(chosenChannels) else {
                throw MediaError.other("\(name) takes \(chosenChannels) channels; the engine plays 1 to 8")
            }
            snd_pcm_hw_params_get_buffer_size(params, &buffer)
            snd_pcm_hw_params_get_period_size(params, &period, nil)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        self.pcm = handle
        self.name = name
        self.rate = Int(chosenRate)
        self.channels = Int(chosenChannels)
        self.speakers = Self.channelMap(handle, channels: Int(chosenChannels))
        self.bufferFrames = max(Int(buffer), 1)
        self.periodFrames = max(Int(period), 1)
        switch clock {
        case .device: pacesItself = true
        case .engine: pacesItself = false
        case .auto: pacesItself = cast_pcm_ends_in_null(handle) == 0
        }
    }

    deinit { snd_pcm_close(pcm) }

    /// The device's channel map after hw_params (snd_pcm_get_chmap, as mpv does), or ALSA's usual order for the
    /// count when it has none or one FFmpeg cannot name (the `null`, `file` and most `plug` PCMs have none).
    private static func channelMap(_ pcm: OpaquePointer, channels: Int) -> SpeakerLayout {
        let usual = SpeakerLayout(alsaDefaultFor: min(max(channels, 1), 8))
        guard let map = snd_pcm_get_chmap(pcm) else { return usual }
        defer { free(map) }
        let positions = (0..<map.pointee.channels).map { cast_chmap_position(map, $0) }
        guard positions.count == channels, let layout = SpeakerLayout(alsaPositions: positions) else { return usual }
        return layout
    }

    private static func check(_ function: String, _ status: Int32) throws {
        guard status >= 0 else {
            throw MediaError.alsa(function, status: status, message: String(cString: snd_strerror(status)))
        }
    }

    /// Writes whole frames from `bytes`, recovering from underruns and suspends; returns frames written.
    func write(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let frames = bytes.count / frameBytes
        var done = 0
        while done < frames {
            let n = snd_pcm_writei(pcm, base + done * frameBytes, snd_pcm_uframes_t(frames - done))
            if n >= 0 {
                done += Int(n)
                continue
            }
            let status = Int32(n)
            if status == -EINTR || status == -EAGAIN { continue }
            // -EPIPE (underrun) and -ESTRPIPE (suspended) are recovered; anything else is fatal.
            let recovered = snd_pcm_recover(pcm, status, 1)
            if recovered < 0 {
                throw MediaError.alsa(
                    "snd_pcm_writei(\(name))", status: status, message: String(cString: snd_strerror(status)))
            }
        }
        return done
    }

    /// Frames written but not yet heard (snd_pcm_delay); 0 when the device cannot tell.
    func delay() -> Int {
        var frames = snd_pcm_sframes_t(0)
        guard snd_pcm_delay(pcm, &frames) >= 0 else { return 0 }
        return max(Int(frames), 0)
    }

    /// Throws away what is buffered and stops at once (pause).
    func drop() { snd_pcm_drop(pcm) }

    /// Makes the device ready to be written again after `drop()`.
    func prepare() { snd_pcm_prepare(pcm) }

    /// Plays out what is buffered and stops.
    func drain() { snd_pcm_drain(pcm) }
}
