// cast-mirror: the screen capture and encoder of `cast mirror`. `cast` links no X11 or FFmpeg, so that it starts in
// milliseconds; to mirror it starts this helper with its standard output a pipe: the helper writes the screen as a
// `MirrorStream` (H.264 access units with their capture times), and on standard error an `encoder NAME[: NOTE]` line
// (libx264 or h264_vaapi, as `--encoder auto|software|vaapi` and the VA-API probe chose; the note: auto's reason for
// libx264), one `ready WxH` line, then a `stats` line a second (pictures and bits per second, the rate asked, the
// size and the encoder now), or `error: …` before it exits (2: the display cannot be opened, the window is not
// there, or `--encoder vaapi` cannot run here). With `--window ID` it captures that window and follows its size (as
// it follows the screen's); when the window closes it writes `ended: …` and exits 0, which ends the stream. With
// `--audio PCM` it also reads that ALSA capture PCM and sends it as sound units, stamped on the pictures' clock: Opus
// packets, or uncompressed with `--audio-codec pcm`. It ends when `cast` closes the pipe. Not a command for people:
// run by `cast` only.
import CastBase
import CastMirror
import CastProtocol

#if canImport(Glibc)
    import Glibc
#endif

func say(_ line: String) {
    _ = (line + "\n").withCString { write(2, $0, strlen($0)) }
}

func now() -> UInt64 { UInt64(max(MonotonicClock.nanoseconds(), 0) / 1000) }

// Without this a helper that only skips pictures (its pipe full, nobody reading) would outlive `cast`.
guard MirrorHelper.detach() else { exit(0) }
MirrorHelper.useThreads()
var displayName: String?
var window: UInt?
var fps = 30
var maximumBitRate = 20_000_000
var soundName: String?
var soundCodec = "opus"
var preference = MirrorEncoderChoice.Preference.auto
var vaapiDevice: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    let value = arguments.popFirst()
    switch (argument, value) {
    case ("--display", let name?): displayName = name
    case ("--audio", let name?) where (1...256).contains(name.utf8.count): soundName = name
    case ("--audio-codec", let name?) where ["pcm", "opus"].contains(name): soundCodec = name
    case ("--window", let text?) where MirrorWindow.id(text) != nil: window = MirrorWindow.id(text)
    case ("--encoder", let name?) where MirrorEncoderChoice.Preference(rawValue: name) != nil:
        preference = MirrorEncoderChoice.Preference(rawValue: name)!
    case ("--vaapi-device", let path?) where (1...4096).contains(path.utf8.count): vaapiDevice = path
    case ("--fps", let text?) where Int(text).map({ (1...120).contains($0) }) == true: fps = Int(text)!
    case ("--max-bitrate", let text?) where Double(text).map({ (0.1...200).contains($0) }) == true:
        maximumBitRate = Int(Double(text)! * 1_000_000)
    default:
        say(
            "error: usage: cast-mirror [--display :N] [--window ID] [--fps 1...120] [--max-bitrate MBPS] "
                + "[--audio PCM] [--audio-codec pcm|opus] [--encoder auto|software|vaapi] [--vaapi-device PATH] "
                + "(run by cast mirror)")
        exit(2)
    }
}
signal(SIGPIPE, SIG_IGN)

let capture: ScreenCapture
var encoder: any PictureEncoder
var sound: SoundCapture?
var soundEncoder: SoundEncoder?
// About 0.1 bit per pixel and picture to start with: 6 Mbit/s at 1080p30, within the maximum.
var rate: MirrorRate
do {
    capture = try ScreenCapture(displayName: displayName, window: window)
    rate = MirrorRate(
        start: capture.width * capture.height * fps / 10, minimum: 500_000, maximum: maximumBitRate, fps: fps)
    let opened = try MirrorEncoderChoice.open(
        preference, device: vaapiDevice, width: capture.width, height: capture.height, fps: fps, bitRate: rate.bitRate)
    encoder = opened.encoder
    // The encoder in use, and when auto fell back to libx264 why, for `cast` to show.
    say("encoder \(encoder.name)" + (opened.note.map { ": \($0)" } ?? ""))
    sound = try soundName.map { name throws(MirrorError) in try SoundCapture(name: name) }
    if sound != nil && soundCodec == "opus" {
        soundEncoder = try SoundEncoder(channels: SoundCapture.channels, pieceFrames: SoundCapture.pieceFrames)
    }
} catch {
    say("error: \(error.description)")
    exit(error.isUsage ? 2 : 1)
}
// A pipe of 1 MiB: an intra picture fits while cast sends the one before.
_ = fcntl(1, 1031 /* F_SETPIPE_SZ */, Int32(1 << 20))
if !capture.usesSharedMemory {
    say("note: the X11 display shares no memory with this process (no MIT-SHM): the screen comes through its socket")
}
say("ready \(capture.width)x\(capture.height)")
let output = StreamOutput()
guard output.write(MirrorStream.magic) else { exit(0) }
// The pointer, beside the pictures: its own thread and X connection, a unit when it moves or changes shape.
if let problem = CursorTracker.start(
    displayName: displayName, origin: capture.sharedOrigin,
    send: { [output] cursor in
        let payload = cursor.encoded
        return output.write(
            MirrorStream.Unit.header(payloadLength: payload.count, captured: now()) + payload)
    })
{
    say("note: \(problem)")
}
// The sound, beside the pictures: its own thread, a unit every 10 ms (an Opus packet, or the samples).
if let sound = sound.take() {
    let encoder = soundEncoder.take()
    startDetachedThread(name: "cast-mirror sound") { [output] in
        func send(_ payload: [UInt8], captured: UInt64) {
            guard output.write(MirrorStream.Unit.header(payloadLength: payload.count, captured: captured) + payload)
            else { exit(0) }
        }
        while let (captured, piece) = sound.next(now: now) {
            guard let encoder else {
                send(piece.encoded, captured: captured)
                continue
            }
            do {
                try encoder.encode(piece, captured: captured) { stamp, packet in send(packet.encoded, captured: stamp) }
            } catch {
                say("note: the sound stopped: \(error)")
                return
            }
        }
        say("note: the sound capture ended")
    }
}

var pacing = MirrorPacing(fps: fps, sharpQuantiser: ScreenEncoder.sharpQuantiser)
var second = (start: now(), pictures: 0, bytes: 0)
// Captures refused by the server in a row: the rectangle changed under the request; its events follow.
var refused = 0
while true {
    // At most `fps` pictures a second; after that a change is captured as soon as the X server reports it (no waiting
    // for a tick: a tick would add half a picture's time on average). The pacing says when to look and what is
    // wanted: a change, the pictures that sharpen it once the damage stopped, a keepalive a second.
    let pause = pacing.pause(now: now())
    if pause > 0 {
        var time = timespec(tv_sec: Int(pause / 1_000_000), tv_nsec: Int(pause % 1_000_000) * 1000)
        nanosleep(&time, nil)
    }
    if capture.waitForChange(milliseconds: Int(pacing.waitForChange(now: now()) / 1000)) {
        pacing.changed(at: now())
    }
    if capture.isClosed {
        say("ended: the window \(ScreenCapture.windowName(window ?? 0)) was closed")
        exit(0)
    }
    do {
        if capture.followGeometry() {
            // A new size: a new encoder, whose first picture carries the new parameter sets and is a key picture.
            let reopened = try MirrorEncoderChoice.reopen(
                like: encoder, width: capture.width, height: capture.height, fps: fps, bitRate: rate.bitRate)
            encoder = reopened.encoder
            if let note = reopened.note { say("note: \(note)") }
            pacing.changed(at: now())
            say("size \(capture.width)x\(capture.height)")
        }
    } catch {
        say("error: \(error)")
        exit(1)
    }
    let captured = now()
    let wanted = pacing.wants(now: captured)
    var queued: Int32 = 0
    _ = ioctl(1, UInt(FIONREAD), &queued)
    let decision = wanted ? rate.decide(queued: Int(queued), now: captured) : .skip
    if wanted && decision == .skip {
        // The queue holds more than a picture: look again in 2 ms, and capture as soon as it drained.
        var pause = timespec(tv_sec: 0, tv_nsec: 2_000_000)
        nanosleep(&pause, nil)
    }
    if decision == .encode {
        do {
            if pacing.isSharpening && pacing.wantsFreshStart {
                if encoder.bitRate != rate.bitRate { try encoder.setBitRate(rate.bitRate, relaxed: false) }
                try encoder.restart(relaxed: true)
                pacing.startedAfresh()
            } else if encoder.bitRate != rate.bitRate || encoder.isRelaxed != pacing.isSharpening {
                try encoder.setBitRate(rate.bitRate, relaxed: pacing.isSharpening)
            }
            try capture.capture { pixels, stride in
                try encoder.encode(pixels, stride: stride, captured: captured) { unit in
                    // One write: `cast` answers the receiver's read with what one read of the pipe gives, so a header
                    // alone would cost a round trip more before the picture.
                    var bytes = MirrorStream.Unit.header(payloadLength: unit.count, captured: captured)
                    bytes.append(contentsOf: unit)
                    guard output.write(bytes) else { exit(0) }
                    rate.wrote(bytes.count)
                    second.bytes += bytes.count
                }
            }
            refused = 0
            second.pictures += 1
            pacing.sent(at: captured, quantiser: encoder.lastQuantiser)
        } catch let error as MirrorError where error.isRefusedCapture && refused < 50 {
            // The window moved, changed size or closed, or the screen's resolution changed, under the request: its
            // events say which before the next picture.
            refused += 1
            var pause = timespec(tv_sec: 0, tv_nsec: 20_000_000)
            nanosleep(&pause, nil)
        } catch {
            say("error: \(error)")
            exit(1)
        }
    }
    if captured >= second.start + 1_000_000 {
        let seconds = Double(captured - second.start) / 1e6
        say(
            "stats \(Double(second.pictures) / seconds) \(Int(Double(second.bytes * 8) / seconds)) \(rate.bitRate) "
                + "\(capture.width)x\(capture.height) \(encoder.name)")
        second = (captured, 0, 0)
    }
}
