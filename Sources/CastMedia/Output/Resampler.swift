internal import CFFmpeg

/// Converts decoded audio frames to interleaved S16 at the device's rate and speakers (swresample): any layout is
/// downmixed (or upmixed) with swresample's standard matrix, as `ffmpeg -ac N` does, centre and surrounds included,
/// and written in the device's channel order. Rebuilds itself when the input format changes mid-stream. Used by the
/// audio output thread only.
///
/// With `compensates`, swresample resamples even between equal rates, so that `stretch` can make each media second a
/// little longer or shorter on the device (`swr_set_compensation`): how a sound card that paces itself is kept in step
/// with a group (`DriftCompensation`). Without it the samples pass through untouched (bit-exact captures).
final class Resampler {
    private var swr: OpaquePointer?
    private var inputKey: (format: Int32, rate: Int32, layout: String)?
    private let outputRate: Int
    private let speakers: SpeakerLayout
    private var outputChannels: Int { speakers.channels }
    private var output: [UInt8] = []
    /// The output in the device's order, when it differs from FFmpeg's.
    private var reordered: [Int16] = []

    /// The stream converted, named in errors ("audio stream #1 (dts, 48000 Hz, 5.1(side))").
    private let streamName: String
    /// Whether `stretch` may be used (the context always resamples).
    let compensates: Bool
    /// Output samples per input sample, less 1: positive plays the media slower (samples are added), within ±0.1 %.
    /// Applied from the next `convert` on; 0 without `compensates`.
    var stretch = 0.0

    /// The compensation is spread over this many output samples, 10 s of them: its delta is then a whole number of
    /// samples to within 0.1 ppm of the stretch asked for at 48 kHz.
    private var compensationDistance: Int32 { Int32(outputRate * 10) }

    init(outputRate: Int, speakers: SpeakerLayout, streamName: String, compensates: Bool = false) {
        self.outputRate = outputRate
        self.speakers = speakers
        self.streamName = streamName
        self.compensates = compensates
    }

    /// Output in ALSA's usual order for `outputChannels` (1...8).
    convenience init(outputRate: Int, outputChannels: Int, streamName: String, compensates: Bool = false) {
        self.init(
            outputRate: outputRate, speakers: SpeakerLayout(alsaDefaultFor: outputChannels), streamName: streamName,
            compensates: compensates)
    }

    deinit { swr_free(&swr) }

    /// Forgets the samples swresample holds back (a seek): the next frame rebuilds the context.
    func reset() {
        swr_free(&swr)
        inputKey = nil
    }

    /// Converts `frame` (nil: flush what swresample holds back) and hands the interleaved bytes to `body`.
    func convert(_ frame: Frame?, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        if let frame { try configure(for: frame.pointer) }
        guard let swr else { return }
        if compensates {
            let stretch = min(max(stretch, -0.001), 0.001)
            let delta = Int32((stretch * Double(compensationDistance)).rounded())
            try checkFFmpeg(
                "\(streamName): swr_set_compensation", swr_set_compensation(swr, delta, compensationDistance))
        }
        let inSamples = frame.map { Int32($0.pointer.pointee.nb_samples) } ?? 0
        let capacity = Int(swr_get_out_samples(swr, inSamples)) + 32
        guard capacity > 0 else { return }
        let frameBytes = outputChannels * 2
        if output.count < capacity * frameBytes { output = [UInt8](repeating: 0, count: capacity * frameBytes) }
        let produced = output.withUnsafeMutableBytes { raw in
            cast_swr_convert_frame(
                swr, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(capacity), frame?.pointer)
        }
        try checkFFmpeg("\(streamName): swr_convert", produced)
        guard produced > 0 else { return }
        guard let order = speakers.order else {
            return try output.withUnsafeBytes { raw in
                try body(UnsafeRawBufferPointer(rebasing: raw[0..<Int(produced) * frameBytes]))
            }
        }
        let samples = Int(produced) * outputChannels
        if reordered.count < samples { reordered = [Int16](repeating: 0, count: samples) }
        let channels = outputChannels
        reordered.withUnsafeMutableBufferPointer { deviceOrder in
            output.withUnsafeBytes { raw in
                let ffmpegOrder = raw.bindMemory(to: Int16.self)
                for start in stride(from: 0, to: samples, by: channels) {
                    for (channel, source) in order.enumerated() {
                        deviceOrder[start + channel] = ffmpegOrder[start + source]
                    }
                }
            }
        }
        try reordered.withUnsafeBytes { raw in try body(UnsafeRawBufferPointer(rebasing: raw[0..<(samples * 2)])) }
    }

    /// Converts interleaved S16 `samples` (`channels` to a frame, at `rate`) as if they were a decoded frame: how tests
    /// feed the resampler without FFmpeg's types.
    func convert(
        s16 samples: [Int16], channels: Int, rate: Int, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let frame = Frame()
        let pointer = frame.pointer
        pointer.pointee.format = AV_SAMPLE_FMT_S16.rawValue
        pointer.pointee.sample_rate = Int32(rate)
        pointer.pointee.nb_samples = Int32(samples.count / channels)
        av_channel_layout_default(&pointer.pointee.ch_layout, Int32(channels))
        try checkFFmpeg("av_frame_get_buffer", av_frame_get_buffer(pointer, 0))
        samples.withUnsafeBytes { raw in
            pointer.pointee.data.0!.update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: raw.count)
        }
        try convert(frame, body)
    }

    private func configure(for frame: UnsafeMutablePointer<AVFrame>) throws {
        var inLayout = Self.inputLayout(of: frame)
        defer { av_channel_layout_uninit(&inLayout) }
        var description = [CChar](repeating: 0, count: 128)
        av_channel_layout_describe(&inLayout, &description, description.count)
        let key = (
            format: frame.pointee.format, rate: frame.pointee.sample_rate, layout: string(fromCBuffer: description)
        )
        if let inputKey, swr != nil, inputKey == key { return }
        swr_free(&swr)
        var outLayout = speakers.ffmpegLayout()
        defer { av_channel_layout_uninit(&outLayout) }
        // A frame swresample cannot take (no rate, an unknown sample format, more channels than it mixes) names
        // what it was and what the device wanted.
        let format = av_get_sample_fmt_name(AVSampleFormat(rawValue: key.format)).map { String(cString: $0) } ?? "?"
        let what =
            "\(streamName): cannot convert \(key.layout) \(format) at \(key.rate) Hz to \(speakers) at \(outputRate) Hz"
        try checkFFmpeg(
            "\(what): swr_alloc_set_opts2",
            swr_alloc_set_opts2(
                &swr, &outLayout, AV_SAMPLE_FMT_S16, Int32(outputRate), &inLayout,
                AVSampleFormat(rawValue: key.format), key.rate, 0, nil))
        try checkFFmpeg("\(what): swr_init", swr_init(swr))
        // Compensation with no delta turns resampling on (swresample initialises itself again), so that later
        // stretches change nothing but the rate.
        if compensates { try checkFFmpeg("\(what): swr_set_compensation", swr_set_compensation(swr, 0, 0)) }
        inputKey = key
    }

    /// The layout to give swresample for a frame's channels: the frame's own when FFmpeg knows its speakers (native
    /// order, or a custom order naming only known speakers once each), else the default layout for the channel count,
    /// as `ffmpeg` guesses for a WAV without a channel mask or an Opus stream of mapping family 255.
    static func inputLayout(of frame: UnsafeMutablePointer<AVFrame>) -> AVChannelLayout {
        var layout = AVChannelLayout()
        let given = frame.pointee.ch_layout
        let count = Int(given.nb_channels)
        if given.order == AV_CHANNEL_ORDER_NATIVE && count > 0 && given.u.mask.nonzeroBitCount == count {
            av_channel_layout_from_mask(&layout, given.u.mask)
            return layout
        }
        if given.order == AV_CHANNEL_ORDER_CUSTOM && count > 0 {
            // A custom order whose speakers happen to be in FFmpeg's own order is that native layout.
            var mask: UInt64 = 0
            var inOrder = true
            withUnsafePointer(to: frame.pointee.ch_layout) { pointer in
                for index in 0..<Int32(count) {
                    let channel = av_channel_layout_channel_from_index(pointer, UInt32(index)).rawValue
                    guard channel >= 0 && channel < 64 else {
                        inOrder = false
                        return
                    }
                    let bit = UInt64(1) << UInt64(channel)
                    if bit <= mask { inOrder = false }
                    mask |= bit
                }
            }
            if inOrder {
                av_channel_layout_from_mask(&layout, mask)
                return layout
            }
        }
        av_channel_layout_default(&layout, Int32(max(count, 1)))
        return layout
    }
}
