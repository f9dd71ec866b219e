import CastBase
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What `cast-mirror` writes to its standard error once the screen is open, taken apart: a `stats` line a second
/// (the figures), `note: …` lines (kept with the figures after them, and the last ones after the last figures), and
/// the word it ends the stream with (`ended: …` when the window it captured closed, `error: …`).
///
/// Thread-safety: `nextFigures` is called from one thread; `end` is a monitor that `ending` and `lastNotes` read
/// from any thread; `lines` has its own mutex.
final class MirrorHelperReports: Sendable {
    private let lines: HelperLines
    /// Whether the helper ended (its pipe closed), the word it ended with, and what it noted after its last figures.
    private let end = Monitor<(over: Bool, word: ScreenMirror.Ending?, notes: [String])>((false, nil, []))

    init(lines: HelperLines) { self.lines = lines }

    /// Reports read from `fd` (the helper's standard error), closed with this object.
    convenience init(fd: Int32) { self.init(lines: HelperLines(fd: fd)) }

    /// The most notes kept between two figures (a helper that notes without end is not echoed without end).
    static let notesKept = 8

    /// The text of a `note: …` line of the helper, nil for any other line.
    static func note(in line: String) -> String? {
        line.hasPrefix("note: ") ? String(line.dropFirst(6)) : nil
    }

    /// The helper's next figures, with what it noted since the figures before; nil once it ended (`lastNotes` then
    /// has what it noted after its last figures).
    func nextFigures() -> ScreenMirror.Figures? {
        var notes: [String] = []
        while let line = lines.next() {
            if let note = Self.note(in: line) {
                if notes.count < Self.notesKept { notes.append(note) }
                continue
            }
            if line.hasPrefix("ended: ") || line.hasPrefix("error: ") {
                let word = String(line.dropFirst(7))
                end.withLock { $0.word = line.hasPrefix("ended") ? .closed(word) : .failed(word) }
                continue
            }
            // stats FPS BITS TARGET WxH ENCODER
            let parts = line.split(separator: " ")
            let size = parts.count == 6 ? parts[4].split(separator: "x").compactMap { Int($0) } : []
            guard parts.count == 6, parts[0] == "stats", let fps = Double(parts[1]), let rate = Int(parts[2]),
                let target = Int(parts[3]), size.count == 2
            else { continue }
            return ScreenMirror.Figures(
                fps: fps, bitRate: rate, targetBitRate: target, width: size[0], height: size[1],
                encoder: String(parts[5].prefix(32)), notes: notes)
        }
        // Its last notes come just before it exits (the sound capture ended), with no figures after them.
        end.withLock {
            $0.notes = notes
            $0.over = true
        }
        return nil
    }

    /// What the helper noted after its last figures, once `nextFigures` returned nil.
    var lastNotes: [String] { end.read { $0.notes } }

    /// The word the helper ended the stream with, waiting at most `timeout` seconds for `nextFigures` to read it.
    func ending(timeout: Double) -> ScreenMirror.Ending? {
        _ = end.wait(until: { $0.over || $0.word != nil }, timeout: timeout)
        return end.read { $0.word }
    }
}

/// The lines a helper writes to its standard error, one at a time (at most 4 KiB each; longer ones are cut).
///
/// Thread-safety: the descriptor and the bytes read ahead are used under the mutex only.
final class HelperLines: Sendable {
    private let state: Mutex<(fd: Int32, pending: [UInt8])>

    init(fd: Int32) { state = Mutex((fd, [])) }

    deinit { state.withLock { _ = close($0.fd) } }

    /// The next line; nil once the helper closed its end.
    func next() -> String? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        return state.withLock { state -> String? in
            while true {
                if let end = state.pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: state.pending[..<end], as: UTF8.self)
                    state.pending.removeFirst(end + 1)
                    return line
                }
                if state.pending.count > 4096 { state.pending.removeAll() }
                let n = read(state.fd, &chunk, chunk.count)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return nil }
                state.pending.append(contentsOf: chunk[..<n])
            }
        }
    }
}
