// cast send: serve a file (or a URL) to a receiver and follow it, with a status line and keys.
import CastCommandLine
import CastKit
import CastProtocol
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

nonisolated(unsafe) var interruptSource: (any DispatchSourceSignal)?

func send(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1 else {
        throw CastError(.usage, "cast send needs one SOURCE: a file, - for standard input, or an http(s) URL")
    }
    let sourceArgument = arguments.positionals[0]
    let lowered = sourceArgument.lowercased()
    let isURL = lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    var credentials: (username: String, password: String)?
    if let text = arguments.options["user"] {
        guard isURL else { throw CastError(.usage, "--user goes only with an http(s) URL") }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
            throw CastError(.usage, "--user takes USER:PASS")
        }
        credentials = (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
    var startTime: Double?
    if let text = arguments.options["start"] {
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw CastError(.usage, "--start must be a number of seconds ≥ 0")
        }
        startTime = value
    }
    let playback: RemotePlayback
    let title: String
    if isURL {
        // Checked before anything connects; the URL is sent without its credentials.
        let split = RemotePlayback.splitCredentials(sourceArgument)
        if let problem = PlayRequest.problem(withURL: split.url) { throw CastError(.usage, "the URL \(problem)") }
        title = split.url
        let receiver = try ReceiverBrowser.resolve(arguments.options["to"], timeout: browseTimeout(arguments))
        playback = try RemotePlayback.start(
            url: sourceArgument, username: credentials?.username, password: credentials?.password, on: receiver,
            configDirectory: senderConfigDirectory(), senderName: senderName(), startTime: startTime)
    } else {
        let file = try MediaFile.open(sourceArgument)
        title = file.title
        let receiver = try ReceiverBrowser.resolve(arguments.options["to"], timeout: browseTimeout(arguments))
        playback = try RemotePlayback.start(
            file, on: receiver, configDirectory: senderConfigDirectory(), senderName: senderName(), startTime: startTime)
    }
    defer { playback.close() }

    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { try? playback.control(.stop) }
    source.resume()
    interruptSource = source

    let json = arguments.has("json")
    let live = !json && isatty(1) == 1
    var line = StatusLine(title: title)
    // Keys act on the receiver; what they change comes back as events like any other.
    let shown = Mutex((state: PlaybackState.stopped, position: 0.0, volume: playback.initialVolume.level))
    if live && !arguments.has("no-interactive") {
        _ = KeyReader.start { key in
            let now = shown.withLock { $0 }
            switch key {
            case .space: try? playback.control(now.state == .paused ? .resume : .pause)
            case .quit: try? playback.control(.stop)
            case .left: try? playback.control(.seek(position: max(0, now.position - 10), exact: false))
            case .right: try? playback.control(.seek(position: now.position + 10, exact: false))
            case .up: try? playback.control(.volume(min(1, (now.volume + 0.1) * 10).rounded() / 10))
            case .down: try? playback.control(.volume(max(0, (now.volume - 0.1) * 10).rounded() / 10))
            }
        }
    }
    while true {
        let event: PlaybackEvent
        do {
            event = try playback.nextEvent()
        } catch {
            if live { output("") }
            throw CastError(.connectionLost, "lost the receiver \(playback.receiverName): \(error.message)")
        }
        if json {
            output(event.jsonLine)
        }
        switch event {
        case .playbackState(let state):
            line.state = state
            shown.withLock { $0.state = state }
            if !json && !live { output("\(state.rawValue)") }
        case .durationAvailable(let duration): line.duration = duration
        case .position(let seconds, _):
            line.position = seconds
            shown.withLock { $0.position = seconds }
        case .volume(let level, let muted):
            line.volume = muted ? 0 : level
            shown.withLock { $0.volume = level }
        case .finished(let reason, let error):
            if live { output("") }
            switch reason {
            case .playbackEnded, .userExited:
                if !json { output("finished: \(reason.rawValue)") }
                return
            case .playbackError:
                throw CastError(.playback, "playback failed on \(playback.receiverName): \(error ?? "unknown error")")
            }
        default: break
        }
        if live {
            FileHandle.standardOutput.write(Data(("\r\u{1B}[2K" + line.render()).utf8))
        }
    }
}

/// Opens a connection to the receiver named by the first positional argument (verbs that take
/// `NAME [VALUE]`), runs `body`, closes.
