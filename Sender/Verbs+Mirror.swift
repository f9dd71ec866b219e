// cast mirror: the sender's X11 screen (or one window) on one or several receivers, live, until q, Ctrl-C or each
// receiver's end (another sender's take-over, `cast stop`, the window closed).
import CastBase
import CastCommandLine
import CastProtocol
import CastSender
import Dispatch
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func mirror(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.isEmpty else {
        throw CastError(.usage, "cast mirror takes no arguments: name the receiver with --to")
    }
    let targets: [String?] = arguments.values("to").isEmpty ? [nil] : arguments.values("to")
    guard targets.count <= 16 else { throw CastError(.usage, "cast mirror shows the screen on at most 16 receivers") }
    // The same receiver twice would take itself over.
    if let twice = targets.compactMap({ $0?.lowercased() }).duplicates.first {
        throw CastError(.usage, "cast mirror: \(printable(twice)) is named twice with --to")
    }
    let fps =
        try arguments.options["fps"].map { text throws(CastError) -> Int in
            guard let fps = Int(text), (1...60).contains(fps) else { throw CastError(.usage, "--fps takes 1 to 60") }
            return fps
        } ?? 30
    let maximumBitRate = try arguments.options["max-bitrate"].map { text throws(CastError) -> Double in
        guard let rate = Double(text), (0.5...100).contains(rate) else {
            throw CastError(.usage, "--max-bitrate takes 0.5 to 100 (megabits a second)")
        }
        return rate
    }
    let window = try arguments.options["window"].map { text throws(CastError) -> UInt in
        guard let id = MirrorWindow.id(text) else {
            throw CastError(.usage, "--window takes an X11 window id, such as 0x2a00007 (xwininfo shows them)")
        }
        return id
    }
    let audio = try arguments.options["audio"].map { name throws(CastError) -> String in
        guard (1...256).contains(name.utf8.count), !name.contains(where: \.isNewline) else {
            throw CastError(.usage, "--audio takes an ALSA capture PCM's name, such as default or hw:1")
        }
        return name
    }
    let audioCodec = try arguments.options["audio-codec"].map { name throws(CastError) -> ScreenMirror.SoundCodec in
        guard let codec = ScreenMirror.SoundCodec(rawValue: name) else {
            throw CastError(.usage, "--audio-codec takes opus or pcm")
        }
        guard audio != nil else { throw CastError(.usage, "--audio-codec goes with --audio PCM") }
        return codec
    }
    let encoder = try arguments.options["encoder"].map { name throws(CastError) -> ScreenMirror.Encoder in
        guard let encoder = ScreenMirror.Encoder(rawValue: name) else {
            throw CastError(.usage, "--encoder takes auto, software or vaapi")
        }
        return encoder
    }
    let vaapiDevice = try arguments.options["vaapi-device"].map { path throws(CastError) -> String in
        guard (2...4096).contains(path.utf8.count), path.hasPrefix("/"), !path.contains(where: \.isNewline) else {
            throw CastError(.usage, "--vaapi-device takes a render node's path, such as /dev/dri/renderD128")
        }
        guard encoder != .software else { throw CastError(.usage, "--vaapi-device goes with --encoder auto or vaapi") }
        return path
    }
    // The screen first: no display (or `--encoder vaapi` on a machine without it) is a usage error, found before any
    // receiver is looked for.
    let screen = try ScreenMirror.start(
        display: arguments.options["display"], window: window, fps: fps, maximumBitRate: maximumBitRate,
        audio: audio, audioCodec: audioCodec ?? .opus, encoder: encoder ?? .auto, vaapiDevice: vaapiDevice,
        receivers: targets.count)
    if let note = screen.encoderNote { writeError("cast: note: \(printable(note))\n") }
    for note in screen.notes { writeError("cast: note: \(printable(note))\n") }
    var playbacks: [RemotePlayback] = []
    defer { for playback in playbacks { playback.close() } }
    for (index, given) in targets.enumerated() {
        let connection = try reachCastReceiver(given, arguments)
        playbacks.append(
            try RemotePlayback.start(
                screen.files[index], over: connection, configDirectory: senderConfigDirectory(), mirror: true))
    }
    let json = arguments.has("json")
    let live = !json && isatty(1) == 1
    installMirrorControls(playbacks, keys: live)
    let names = playbacks.map { printable($0.receiverName) }
    if !json {
        let what = window.map { "the window 0x\(String($0, radix: 16)) (\(screen.width)x\(screen.height))" }
        output(
            "mirroring \(what ?? "\(screen.width)x\(screen.height)") to \(names.joined(separator: ", ")) (q or Ctrl-C stops)"
        )
        if playbacks.count > 1 { output("(one picture for all, each shows it as it arrives: not in step)") }
    }
    startDetachedThread(name: "cast mirror figures") { showFigures(screen, json: json, live: live) }
    let ends = Monitor<[Int: Result<FinishReason, CastError>]>([:])
    for (index, playback) in playbacks.enumerated() {
        let label = playbacks.count > 1 ? names[index] : nil
        startDetachedThread(name: "cast mirror events") {
            let end = follow(playback, name: names[index], label: label, json: json, live: live)
            screen.receiverLeft(index)
            ends.withLock { $0[index] = end }
        }
    }
    ends.wait(until: { $0.count == playbacks.count })
    let results = ends.read { ends in ends.keys.sorted().compactMap { ends[$0] } }
    var errors = results.compactMap { result -> CastError? in
        if case .failure(let error) = result { return error }
        return nil
    }
    // The stream's end, once for all receivers: the helper ended it when the window it captured closed (exit 0, as a
    // film's end), or when it failed (exit 1).
    if results.contains(where: { (try? $0.get()) == .playbackEnded }) {
        switch screen.ending() {
        case .closed(let word)?:
            output(
                json
                    ? CastCommandLine.json(["event": "mirrorEnded", "reason": word])
                    : "mirroring ended: \(printable(word))")
        case .failed(let word)?:
            errors.insert(
                CastError(.playback, "mirroring ended: \(ScreenMirror.programName) failed: \(printable(word))"), at: 0)
        case nil: break
        }
    }
    if let error = errors.first { throw error }
}

/// The helper's figures, once a second: a status line on a terminal, a JSON line with `--json`.
private func showFigures(_ screen: ScreenMirror, json: Bool, live: Bool) {
    func show(_ notes: [String]) {
        for note in notes { writeError((live ? "\r\u{1B}[2K" : "") + "cast: note: \(printable(note))\n") }
    }
    defer { show(screen.lastNotes) }
    while let figures = screen.nextFigures() {
        show(figures.notes)
        if json {
            output(
                "{\"event\":\"mirror\",\"width\":\(figures.width),\"height\":\(figures.height),\"fps\":\(fixed(figures.fps, digits: 1)),"
                    + "\"bitRate\":\(figures.bitRate),\"targetBitRate\":\(figures.targetBitRate),"
                    + "\"encoder\":\(CastCommandLine.json(figures.encoder))"
                    + (screen.encoderNote.map { ",\"encoderNote\":\(CastCommandLine.json($0))" } ?? "") + "}")
        } else if live {
            let text =
                "\(figures.width)x\(figures.height)  \(fixed(figures.fps, digits: 1)) fps  "
                + "\(fixed(Double(figures.bitRate) / 1e6, digits: 2)) Mbit/s (at most \(fixed(Double(figures.targetBitRate) / 1e6, digits: 1)))  "
                + printable(figures.encoder)
            write("\r\u{1B}[2K" + text, to: STDOUT_FILENO)
        }
    }
}

/// One receiver's events until its finish: why it finished when it ended well (stopped, or the stream ended), else
/// the error `cast mirror` exits with. `label`: the receiver's name, put in each JSON line when there are several.
private func follow(
    _ playback: RemotePlayback, name: String, label: String?, json: Bool, live: Bool
) -> Result<FinishReason, CastError> {
    while true {
        let event: PlaybackEvent
        do {
            event = try playback.nextEvent()
        } catch {
            if live { output("") }
            return .failure(CastError(.connectionLost, "lost the receiver \(name): \(error.message)"))
        }
        if json {
            let line = event.jsonLine
            output(label.map { "{\"receiver\":\(CastCommandLine.json($0)),\(line.dropFirst())" } ?? line)
        }
        switch event {
        case .finished(_, _, .receiverShutdown?):
            if live { output("") }
            return .failure(CastError(.connectionLost, "the receiver \(name) is shutting down"))
        case .finished(let reason, let error, _):
            if live { output("") }
            if reason == .playbackError {
                return .failure(
                    CastError(.playback, "mirroring on \(name) ended: \(printable(error ?? "unknown error"))"))
            }
            if !json { output("finished: \(reason.rawValue)") }
            return .success(reason)
        default: break
        }
    }
}

/// Ctrl-C, and q on a terminal, stop mirroring: each receiver ends its session and its finish ends the verb.
private func installMirrorControls(_ playbacks: [RemotePlayback], keys: Bool) {
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { for playback in playbacks { try? playback.control(.stop) } }
    source.resume()
    interruptSource = source
    if keys {
        _ = KeyReader.start { key in
            if key == .quit { for playback in playbacks { try? playback.control(.stop) } }
        }
    }
}

extension Array where Element: Hashable {
    /// The elements that occur more than once, in the order of their second occurrence.
    fileprivate var duplicates: [Element] {
        var seen = Set<Element>()
        return filter { !seen.insert($0).inserted }
    }
}
