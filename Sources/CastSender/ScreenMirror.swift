import CastBase
import CastSecurity
import CastSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The sender's screen as a live stream (`cast mirror`): the helper process `cast-mirror`, next to the running
/// executable, captures the X11 display and encodes it (X11 and FFmpeg stay out of `cast`), and writes the
/// `MirrorStream` to a pipe whose read end is `file`, which `RemotePlayback` serves as a `mirror` session. Its
/// figures come on a second pipe, a line a second (`nextFigures`), and the word it ends with when the window it
/// captures closes (`ending`). The helper is killed and reaped with this object.
///
/// Thread-safety: `file` is served by the media thread; `nextFigures` is read by one thread; `ending` is a monitor;
/// the rest is immutable.
public final class ScreenMirror: Sendable {
    /// The helper's program name.
    public static let programName = "cast-mirror"
    /// The screen, served to the receiver (the first of `files`).
    public var file: MediaFile { files[0] }
    /// The screen, one copy per receiver (`receivers` at start), each served to its receiver.
    public let files: [MediaFile]
    private let fanOut: MirrorFanOut?
    /// The captured screen's (or window's) size in pixels when mirroring started (`Figures` has it now).
    public let width: Int
    public let height: Int
    /// The encoder the helper uses: `libx264` or `h264_vaapi`.
    public let encoder: String
    /// Why the helper encodes with libx264 when `.auto` was asked for (VA-API is not there, or did not open).
    public let encoderNote: String?
    /// What the helper noted while it opened the screen (a display without MIT-SHM, read through its socket): for the
    /// user, as said. Later notes come with the figures (`Figures.notes`).
    public let notes: [String]
    private let pid: pid_t
    /// The helper's lines after it opened the screen: its figures, notes and last word.
    private let reports: MirrorHelperReports

    /// Why the helper ended the stream by itself.
    public enum Ending: Sendable, Equatable {
        /// The window it captured closed ("the window 0x400001 was closed"): mirroring is over, as a film's end.
        case closed(String)
        /// It failed (the X server went away, the encoder failed): what it said.
        case failed(String)
    }

    /// What the helper measured over the last second.
    public struct Figures: Sendable, Equatable {
        /// Pictures encoded a second (an unchanged screen sends none).
        public var fps: Double
        /// Bits a second that left.
        public var bitRate: Int
        /// The bit rate the encoder is asked for now (it follows how fast pictures leave).
        public var targetBitRate: Int
        /// The size of the pictures now: the window's or the screen's (it follows theirs).
        public var width: Int
        public var height: Int
        /// The encoder in use now: `libx264` or `h264_vaapi` (the helper falls back to libx264 when VA-API cannot
        /// take a new size).
        public var encoder: String
        /// What the helper noted since the figures before (the pointer cannot be followed, the sound stopped, VA-API
        /// did not take a new size): for the user, as said.
        public var notes: [String] = []
    }

    private init(
        files: [MediaFile], fanOut: MirrorFanOut?, width: Int, height: Int, encoder: (name: String, note: String?),
        notes: [String], pid: pid_t, lines: HelperLines
    ) {
        self.files = files
        self.encoder = encoder.name
        self.encoderNote = encoder.note
        self.notes = notes
        self.fanOut = fanOut
        self.width = width
        self.height = height
        self.pid = pid
        self.reports = MirrorHelperReports(lines: lines)
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }

    /// How the sound (`--audio`) travels: Opus packets (the default, about 128 kbit/s) or uncompressed PCM (1.5
    /// Mbit/s, for a loopback or a fast LAN).
    public enum SoundCodec: String, Sendable {
        case opus
        case pcm
    }

    /// Which encoder the helper uses (`cast mirror --encoder`).
    public enum Encoder: String, Sendable, CaseIterable {
        /// The GPU's through VA-API when the helper's probe opens it, otherwise libx264 (`encoderNote` says why).
        case auto
        /// libx264, without probing.
        case software
        /// The GPU's through VA-API, or a usage error that says why not.
        case vaapi
    }

    /// Starts capturing `display` (nil: `$DISPLAY`), or only its window `window` (an X11 window id), at `fps`
    /// pictures a second, at most `maximumBitRate` megabits a second, with the sound of the ALSA capture PCM `audio`
    /// in `audioCodec` when given, encoded as `encoder` asks (VA-API on `vaapiDevice`, nil: the first render node),
    /// and waits until the helper has the screen open.
    /// - Throws: `CastError` `.usage` when there is no display to capture (or no permission), no such window shown,
    ///   or `.vaapi` asked for and VA-API cannot run here; `.playback` when the helper is missing or fails.
    /// With several `receivers`, one capture and encode is copied to each (`files`), not in step, at the bit rate of
    /// the slowest.
    public static func start(
        display: String?, window: UInt? = nil, fps: Int, maximumBitRate: Double?, audio: String? = nil,
        audioCodec: SoundCodec = .opus, encoder: Encoder = .auto, vaapiDevice: String? = nil, receivers: Int = 1
    ) throws(CastError) -> ScreenMirror {
        precondition((1...16).contains(receivers), "1 to 16 receivers")
        let program = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
        ).deletingLastPathComponent().appendingPathComponent(programName).path
        var arguments = [programName, "--fps", "\(fps)"]
        if let display { arguments += ["--display", display] }
        if let window { arguments += ["--window", "\(window)"] }
        if let maximumBitRate { arguments += ["--max-bitrate", "\(maximumBitRate)"] }
        if let audio { arguments += ["--audio", audio, "--audio-codec", audioCodec.rawValue] }
        arguments += ["--encoder", encoder.rawValue]
        if let vaapiDevice { arguments += ["--vaapi-device", vaapiDevice] }
        var stream: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        guard pipe(&stream) == 0 else { throw CastError(.playback, "cannot start \(programName): no pipe") }
        guard pipe(&errors) == 0 else {
            close(stream[0])
            close(stream[1])
            throw CastError(.playback, "cannot start \(programName): no pipe")
        }
        // Close-on-exec: the helper gets them only as its 1 and 2.
        for fd in stream + errors { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let pid: pid_t
        do {
            pid = try ProcessSpawn.spawn(
                program, arguments: arguments,
                descriptors: [.nullInput(0), .duplicate(stream[1], to: 1), .duplicate(errors[1], to: 2)])
        } catch {
            for fd in stream + errors { close(fd) }
            throw CastError(.playback, "cannot start \(programName): \(error)")
        }
        close(stream[1])
        close(errors[1])
        let lines = HelperLines(fd: errors[0])
        let title = "the screen \(display ?? getenv("DISPLAY").map { String(cString: $0) } ?? "")"
        let fanOut = receivers > 1 ? MirrorFanOut(source: stream[0], count: receivers) : nil
        if receivers > 1 && fanOut == nil {
            close(stream[0])
            throw CastError(.playback, "cannot copy the screen to \(receivers) receivers: no pipe")
        }
        let files = (fanOut?.branches ?? [stream[0]]).map { MediaFile.stream(fd: $0, title: title) }
        func reaped(killing: Bool = true) -> Int32 {
            if killing { kill(pid, SIGKILL) }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            return status
        }
        var encoderInUse = (name: "libx264", note: String?.none)
        var notes: [String] = []
        while true {
            guard let line = lines.next() else {
                _ = reaped()
                throw CastError(.playback, "\(programName) ended before the screen was open")
            }
            if line.hasPrefix("error: ") {
                // Exit 2: no display, or none this user may capture. The helper exits right after its line.
                let status = reaped(killing: false)
                let usage = (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 2
                throw CastError(usage ? .usage : .playback, String(line.dropFirst(7)))
            }
            if line.hasPrefix("encoder ") {
                let words = line.dropFirst(8).split(separator: ":", maxSplits: 1)
                encoderInUse.name = words.first.map(String.init) ?? "libx264"
                encoderInUse.note = words.count == 2 ? String(words[1].drop { $0 == " " }) : nil
            }
            if let note = MirrorHelperReports.note(in: line), notes.count < MirrorHelperReports.notesKept {
                notes.append(note)
            }
            if line.hasPrefix("ready ") {
                let size = line.dropFirst(6).split(separator: "x").compactMap { Int($0) }
                guard size.count == 2 else { continue }
                return ScreenMirror(
                    files: files, fanOut: fanOut, width: size[0], height: size[1], encoder: encoderInUse,
                    notes: notes, pid: pid, lines: lines)
            }
        }
    }

    /// Stops the helper now (it is reaped with this object): the stream ends. For a program that goes on after
    /// mirroring (CastKit), where a thread reading the figures still holds this object.
    public func stopHelper() { kill(pid, SIGKILL) }

    /// The receiver of `files[index]` left: its copy is no longer written, so it does not hold back the others.
    public func receiverLeft(_ index: Int) { fanOut?.drop(index) }

    /// The helper's next figures, with what it noted since the figures before; nil once it ended (then `ending`
    /// knows why, and `lastNotes` has what it noted after its last figures).
    public func nextFigures() -> Figures? { reports.nextFigures() }

    /// What the helper noted after its last figures, once `nextFigures` returned nil: its last words (the sound
    /// capture ended) come just before it exits, with no figures after them.
    public var lastNotes: [String] { reports.lastNotes }

    /// Why the helper ended the stream by itself; nil when it did not (the receiver stopped). Waits at most `timeout`
    /// seconds for the helper's last words to be read by `nextFigures` (which must be running on another thread): the
    /// receiver may report the stream's end first.
    public func ending(timeout: Double = 2) -> Ending? { reports.ending(timeout: timeout) }
}
