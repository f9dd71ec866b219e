internal import CALSA
internal import CFFmpeg

/// The speakers an audio device's channels feed, as swresample needs them: a set of FFmpeg speakers (which FFmpeg
/// always orders its own way) and, where the device orders its channels differently, the order to write them in.
/// ALSA puts the centre and LFE after the rears (FL FR RL RR FC LFE), FFmpeg before them (FL FR FC LFE BL BR), so
/// 5.1 played as-is needs the reordering; stereo and mono do not.
struct SpeakerLayout: Equatable, CustomStringConvertible {
    /// The speakers as an FFmpeg channel mask (bit n: AVChannel n).
    let mask: UInt64
    /// For each device channel, the index of its speaker in FFmpeg's order; nil when the two orders agree.
    let order: [Int]?

    /// The number of channels.
    var channels: Int { mask.nonzeroBitCount }

    /// ALSA's conventional order for `channels` (1...8): what the `surround21` … `surround71` PCMs and HDMI outputs
    /// take when the device does not tell its channel map.
    init(alsaDefaultFor channels: Int) {
        precondition((1...8).contains(channels))
        let positions: [snd_pcm_chmap_position] =
            switch channels {
            case 1: [SND_CHMAP_MONO]
            case 2: [SND_CHMAP_FL, SND_CHMAP_FR]
            case 3: [SND_CHMAP_FL, SND_CHMAP_FR, SND_CHMAP_LFE]
            case 4: [SND_CHMAP_FL, SND_CHMAP_FR, SND_CHMAP_RL, SND_CHMAP_RR]
            case 5: [SND_CHMAP_FL, SND_CHMAP_FR, SND_CHMAP_RL, SND_CHMAP_RR, SND_CHMAP_FC]
            case 6: [SND_CHMAP_FL, SND_CHMAP_FR, SND_CHMAP_RL, SND_CHMAP_RR, SND_CHMAP_FC, SND_CHMAP_LFE]
            case 7: [SND_CHMAP_FL, SND_CHMAP_FR, SND_CHMAP_RL, SND_CHMAP_RR, SND_CHMAP_FC, SND_CHMAP_LFE, SND_CHMAP_RC]
            default:
                [
                    SND_CHMAP_FL, SND_CHMAP_FR, SND_CHMAP_RL, SND_CHMAP_RR, SND_CHMAP_FC, SND_CHMAP_LFE, SND_CHMAP_SL,
                    SND_CHMAP_SR,
                ]
            }
        self = SpeakerLayout(alsaPositions: positions.map(\.rawValue))!
    }

    /// The layout of an ALSA channel map (`snd_pcm_get_chmap`); nil when a channel is unknown, silent, has no
    /// FFmpeg speaker, or repeats one.
    init?(alsaPositions: [UInt32]) {
        let speakers = alsaPositions.map(Self.speaker(forALSAPosition:))
        guard !speakers.isEmpty, speakers.allSatisfy({ $0 != nil }) else { return nil }
        let bits = speakers.map { UInt64(1) << UInt64($0!.rawValue) }
        let mask = bits.reduce(0, |)
        guard mask.nonzeroBitCount == bits.count else { return nil }
        // FFmpeg's order is by bit: a device channel's index there is the number of the mask's bits below its own.
        let order = bits.map { (mask & ($0 - 1)).nonzeroBitCount }
        self.mask = mask
        self.order = order == Array(0..<order.count) ? nil : order
    }

    /// The same speakers in FFmpeg's order (`av_channel_layout_from_mask`); the caller uninits it.
    func ffmpegLayout() -> AVChannelLayout {
        var layout = AVChannelLayout()
        av_channel_layout_from_mask(&layout, mask)
        return layout
    }

    /// FFmpeg's name of the speakers ("stereo", "5.1(side)"), and ALSA's order when it differs.
    var description: String {
        var layout = ffmpegLayout()
        defer { av_channel_layout_uninit(&layout) }
        var name = [CChar](repeating: 0, count: 128)
        av_channel_layout_describe(&layout, &name, name.count)
        return string(fromCBuffer: name) + (order == nil ? "" : " in ALSA's order")
    }

    /// The FFmpeg speaker of an ALSA channel position (mpv's table in ao_alsa.c), nil for none.
    private static func speaker(forALSAPosition position: UInt32) -> AVChannel? {
        switch snd_pcm_chmap_position(position) {
        case SND_CHMAP_MONO, SND_CHMAP_FC: AV_CHAN_FRONT_CENTER
        case SND_CHMAP_FL: AV_CHAN_FRONT_LEFT
        case SND_CHMAP_FR: AV_CHAN_FRONT_RIGHT
        case SND_CHMAP_RL: AV_CHAN_BACK_LEFT
        case SND_CHMAP_RR: AV_CHAN_BACK_RIGHT
        case SND_CHMAP_LFE, SND_CHMAP_LLFE: AV_CHAN_LOW_FREQUENCY
        case SND_CHMAP_RLFE: AV_CHAN_LOW_FREQUENCY_2
        case SND_CHMAP_SL: AV_CHAN_SIDE_LEFT
        case SND_CHMAP_SR: AV_CHAN_SIDE_RIGHT
        case SND_CHMAP_RC: AV_CHAN_BACK_CENTER
        case SND_CHMAP_FLC: AV_CHAN_FRONT_LEFT_OF_CENTER
        case SND_CHMAP_FRC: AV_CHAN_FRONT_RIGHT_OF_CENTER
        case SND_CHMAP_FLW: AV_CHAN_WIDE_LEFT
        case SND_CHMAP_FRW: AV_CHAN_WIDE_RIGHT
        case SND_CHMAP_FLH, SND_CHMAP_TFL: AV_CHAN_TOP_FRONT_LEFT
        case SND_CHMAP_FCH, SND_CHMAP_TFC: AV_CHAN_TOP_FRONT_CENTER
        case SND_CHMAP_FRH, SND_CHMAP_TFR: AV_CHAN_TOP_FRONT_RIGHT
        case SND_CHMAP_TC: AV_CHAN_TOP_CENTER
        case SND_CHMAP_TRL: AV_CHAN_TOP_BACK_LEFT
        case SND_CHMAP_TRR: AV_CHAN_TOP_BACK_RIGHT
        case SND_CHMAP_TRC: AV_CHAN_TOP_BACK_CENTER
        case SND_CHMAP_TSL: AV_CHAN_TOP_SIDE_LEFT
        case SND_CHMAP_TSR: AV_CHAN_TOP_SIDE_RIGHT
        case SND_CHMAP_BC: AV_CHAN_BOTTOM_FRONT_CENTER
        case SND_CHMAP_BLC: AV_CHAN_BOTTOM_FRONT_LEFT
        case SND_CHMAP_BRC: AV_CHAN_BOTTOM_FRONT_RIGHT
        default: nil
        }
    }
}
