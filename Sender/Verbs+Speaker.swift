// cast send to an AirPlay speaker (RAOP): the audio is decoded here and streamed; same status line,
// --json events, keys and exit codes as a send to a Cast receiver.
import CastCommandLine
import CastKit
import CastProtocol
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `cast send FILE --to SPEAKER`: plays `path` on `speaker` and follows it to the end.
func sendToSpeaker(_ path: String, speaker: ReceiverDescription, arguments: ParsedArguments) throws(CastError) {
    if Playlist.isURL(path) { throw CastError(.usage, "an AirPlay speaker plays local files, not URLs (yet)") }
    guard path != "-" else {
        throw CastError(.usage, "an AirPlay speaker plays files: standard input is not supported yet")
    }
    let file = try MediaFile.open(path)  // missing, unreadable or a directory: a usage error, before connecting
    let volume = try speakerVolume(arguments)
    let playback = try SpeakerPlayback.start(path: path, on: speaker, volume: volume)
    defer { playback.close() }
    if let text = arguments.options["start"], let start = Double(text), start > 0 {
        try playback.control(.seek(position: start, exact: true))
    }

    signal(SIGINT, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler { try? playback.control(.stop) }
    source.resume()
    interruptSource = source

    let json = arguments.has("json")
    let live = !json && isatty(1) == 1
    var line = StatusLine(title: file.title)
    line.duration = playback.duration
    let shown = Mutex((state: PlaybackState.stopped, position: 0.0, volume: volume ?? 1.0))
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
            case .next: break  // one file: there is no next
            }
        }
    }
    while true {
        let event: PlaybackEvent
        do {
            event = try playback.nextEvent()
        } catch {
            if live { output("") }
            throw CastError(.connectionLost, error.message)
        }
        if json { output(event.jsonLine) }
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
                throw CastError(.playback, "playback failed on \(playback.speakerName): \(error ?? "unknown error")")
            }
        default: break
        }
        if live {
            FileHandle.standardOutput.write(Data(("\r\u{1B}[2K" + line.render()).utf8))
        }
    }
}

/// `--volume 0..1`, when given.
func speakerVolume(_ arguments: ParsedArguments) throws(CastError) -> Double? {
    guard let text = arguments.options["volume"] else { return nil }
    guard let value = Double(text), value.isFinite, (0...1).contains(value) else {
        throw CastError(.usage, "--volume must be a number from 0 to 1")
    }
    return value
}
