internal import CFFmpeg
import CastProtocol
import Foundation
import Synchronization

/// The decoder a decode thread uses, which the demux thread may replace while playing (an audio track chosen with
/// `Player.selectAudio`). The decode thread takes the new one at the next serial (the seek that comes with the
/// choice), and hands on frames in the first decoder's time base, so that the output thread's timing still holds.
///
/// Thread-safety: `current` is read and replaced in its `Mutex`; a `Decoder` itself is used by the decode thread only.
final class DecoderSlot: Sendable {
    private let current: Mutex<Decoder>
    /// The time base of the stream the output thread was set up for.
    let timeBase: AVRational

    init(_ decoder: Decoder) {
        current = Mutex(decoder)
        timeBase = decoder.timeBase
    }

    /// The decoder to use from now on.
    var decoder: Decoder { current.withLock { $0 } }

    /// Replaces the decoder (the demux thread, before the seek that carries the change).
    func replace(with decoder: Decoder) { current.withLock { $0 = decoder } }

    /// `frame`, from `decoder`, with its timestamps in `timeBase`.
    func retimed(_ frame: Frame, from decoder: Decoder) -> Frame {
        let from = decoder.timeBase
        guard av_cmp_q(from, timeBase) != 0 else { return frame }
        let f = frame.pointer
        let none = cast_av_nopts_value()
        if f.pointee.best_effort_timestamp != none {
            f.pointee.best_effort_timestamp = av_rescale_q(f.pointee.best_effort_timestamp, from, timeBase)
        }
        if f.pointee.pts != none { f.pointee.pts = av_rescale_q(f.pointee.pts, from, timeBase) }
        if f.pointee.pkt_duration > 0 { f.pointee.pkt_duration = av_rescale_q(f.pointee.pkt_duration, from, timeBase) }
        return frame
    }
}

extension Player {
    /// Plays the audio track in `language` (ISO 639, as `PlayerConfiguration.audioLanguage`) from now on: playback
    /// seeks to where it is (exact) and goes on with that track. A language no track has, or the track that plays
    /// already, changes nothing but the seek; on a source that cannot seek the new track begins with what the
    /// demuxer reads next.
    public func selectAudio(_ language: String) {
        // Before playback starts, the choice is taken when the media opens (no seek: the start time holds).
        let playing = shared.withLock { state in
            state.audioChoice = language.lowercased()
            return state.clockStarted
        }
        if playing { seek(to: clock.position(), exact: true) }
    }

    /// The choice made with `selectAudio`, taken once by the demux thread.
    func takeAudioChoice() -> String? {
        shared.withLock { state in
            defer { state.audioChoice = nil }
            return state.audioChoice
        }
    }
}
