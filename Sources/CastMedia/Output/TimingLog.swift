import Foundation
import Glibc
import Synchronization

/// A record of when media reached the outputs, for measuring A/V sync from outside (`castd --timing-log FILE`).
///
/// Text lines, each stamped with the monotonic clock (CLOCK_MONOTONIC, nanoseconds), which the audio and video
/// outputs share:
///
/// - `video PTS NS`: the frame with media time PTS (seconds) was presented at NS (after the presenters took it: for
///   framemd5 after its line was written; for a window when the SDL thread was handed the picture).
/// - `audio FRAMES NS LATENCY`: after a write to the device returned at NS, FRAMES device frames had been written
///   since the device was opened (with an ALSA `file` PCM, the capture's length in frames), and the last of them will
///   be heard LATENCY nanoseconds after NS. So frame n of the capture is heard at NS + LATENCY − (FRAMES − n) / rate.
///   LATENCY is the device's reported delay when the device paces playback (a sound card); for a device that takes
///   audio at once (ALSA `null`, `file`), the engine paces writes by its clock, and LATENCY is the time until the
///   clock reaches the end of what was written: such a device "plays" each sample when the clock says so.
///
/// Thread-safe: the file is used only inside its `Mutex`, so lines are written each whole, from the video and audio
/// output threads; it is closed in deinit, when nobody can use it any more.
final class TimingLog: Sendable {
    private let file: Mutex<UnsafeMutablePointer<FILE>>

    /// Opens (truncates) `path`.
    init(path: String) throws {
        guard let file = fopen(path, "w") else { throw MediaError.system("fopen(\(path))", errno: errno) }
        self.file = Mutex(file)
    }

    deinit { file.withLock { _ = fclose($0) } }

    /// A video frame with media time `pts` was presented at monotonic `time`.
    func video(pts: Double, at time: UInt64) {
        put(String(format: "video %.6f %llu\n", pts, time))
    }

    /// After a device write returned at `time`, `frames` frames had been written in all; the last is heard
    /// `latency` nanoseconds later.
    func audio(frames: Int, at time: UInt64, latency: Int64) {
        put(String(format: "audio %lld %llu %lld\n", Int64(frames), time, latency))
    }

    private func put(_ line: String) {
        file.withLock { file in
            fputs(line, file)
            fflush(file)
        }
    }
}
