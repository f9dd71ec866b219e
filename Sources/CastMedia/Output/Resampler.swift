internal import CFFmpeg

/// Converts decoded audio frames to interleaved S16 at the device's rate and channel count (swresample).
/// Rebuilds itself when the input format changes mid-stream. Used by the audio output thread only.
final class Resampler {
    private var swr: OpaquePointer?
    private var inputKey: (format: Int32, rate: Int32, layout: String)?
    private let outputRate: Int
    private let outputChannels: Int
    private var output: [UInt8] = []

    init(outputRate: Int, outputChannels: Int) {
        self.outputRate = outputRate
        self.outputChannels = outputChannels
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
        let inSamples = frame.map { Int32($0.pointer.pointee.nb_samples) } ?? 0
        let capacity = Int(swr_get_out_samples(swr, inSamples)) + 32
        guard capacity > 0 else { return }
        let frameBytes = outputChannels * 2
        if output.count < capacity * frameBytes { output = [UInt8](repeating: 0, count: capacity * frameBytes) }
        let produced = output.withUnsafeMutableBytes { raw in
            cast_swr_convert_frame(
                swr, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(capacity), frame?.pointer)
        }
        try checkFFmpeg("swr_convert", produced)
        guard produced > 0 else { return }
        try output.withUnsafeBytes { raw in
            try body(UnsafeRawBufferPointer(rebasing: raw[0..<Int(produced) * frameBytes]))
        }
    }

    private func configure(for frame: UnsafeMutablePointer<AVFrame>) throws {
        var inLayout = AVChannelLayout()
        defer { av_channel_layout_uninit(&inLayout) }
        if frame.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || frame.pointee.ch_layout.nb_channels == 0 {
            av_channel_layout_default(&inLayout, max(frame.pointee.ch_layout.nb_channels, 1))
        } else {
            try checkFFmpeg("av_channel_layout_copy", av_channel_layout_copy(&inLayout, &frame.pointee.ch_layout))
        }
        var description = [CChar](repeating: 0, count: 128)
        av_channel_layout_describe(&inLayout, &description, description.count)
        let key = (format: frame.pointee.format, rate: frame.pointee.sample_rate, layout: string(fromCBuffer: description))
        if let inputKey, swr != nil, inputKey == key { return }
        swr_free(&swr)
        var outLayout = AVChannelLayout()
        defer { av_channel_layout_uninit(&outLayout) }
        av_channel_layout_default(&outLayout, Int32(outputChannels))
        try checkFFmpeg(
            "swr_alloc_set_opts2",
            swr_alloc_set_opts2(
                &swr, &outLayout, AV_SAMPLE_FMT_S16, Int32(outputRate), &inLayout,
                AVSampleFormat(rawValue: key.format), key.rate, 0, nil))
        try checkFFmpeg("swr_init", swr_init(swr))
        inputKey = key
    }
}
