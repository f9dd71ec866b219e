// cast mirror: the sender's X11 screen on a receiver, live, until q, Ctrl-C or another sender's take-over.
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
    guard arguments.values("to").count <= 1 else {
        throw CastError(.usage, "cast mirror shows the screen on one receiver at a time (one --to)")
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
    // The screen first: no display is a usage error, found before any receiver is looked for.
    let screen = try ScreenMirror.start(display: arguments.options["display"], fps: fps, maximumBitRate: maximumBitRate)
    let connection = try reachCastReceiver(arguments.options["to"], arguments)
    let playback = try RemotePlayback.start(
        screen.file, over: connection, configDirectory: senderConfigDirectory(), mirror: true)
    defer { playback.close() }
    let json = arguments.has("json")
    let live = !json && isatty(1) == 1
    installMirrorControls(playback, keys: live)
    let name = printable(playback.receiverName)
    if !json { output("mirroring \(screen.width)x\(screen.height) to \(name) (q or Ctrl-C stops)") }
    startDetachedThread(name: "cast mirror figures") {
        while let figures = screen.nextFigures() {
            if json {
                output(
                    "{\"event\":\"mirror\",\"width\":\(screen.width),\"height\":\(screen.height),\"fps\":\(fixed(figures.fps, digits: 1)),"
                        + "\"bitRate\":\(figures.bitRate),\"targetBitRate\":\(figures.targetBitRate)}")
            } else if live {
                let text =
                    "\(screen.width)x\(screen.height)  \(fixed(figures.fps, digits: 1)) fps  "
                    + "\(fixed(Double(figures.bitRate) / 1e6, digits: 2)) Mbit/s (at most \(fixed(Double(figures.targetBitRate) / 1e6, digits: 1)))"
                write("\r\u{1B}[2K" + text, to: STDOUT_FILENO)
            }
        }
    }
    while true {
        let event: PlaybackEvent
        do {
            event = try playback.nextEvent()
        } catch {
            if live { output("") }
            throw CastError(.connectionLost, "lost the receiver \(name): \(error.message)")
        }
        if json { output(event.jsonLine) }
        switch event {
        case .finished(_, _, .receiverShutdown?):
            if live { output("") }
            throw CastError(.connectionLost, "the receiver \(name) is shutting down")
        case .finished(let reason, let error, _):
            if live { output("") }
            if reason == .playbackError {
                throw CastError(.playback, "mirroring on \(name) ended: \(printable(error ?? "unknown error"))")
            }
            if !json { output("finished: \(reason.rawValue)") }
            return
        default: break
        }
    }
}

/// Ctrl-C, and q on a terminal, stop mirroring: the receiver ends the session and its finish ends the verb.
private func installMirrorControls(_ playback: RemotePlayback, keys: Bool) {
    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { try? playback.control(.stop) }
    source.resume()
    interruptSource = source
    if keys { _ = KeyReader.start { key in if key == .quit { try? playback.control(.stop) } } }
}
