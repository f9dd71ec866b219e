// cast-decode: the speaker decoder of `cast`. `cast` links no FFmpeg, so that it starts in milliseconds; when it
// streams to an AirPlay speaker it starts this helper, which opens the file named on its command line and answers
// requests for 44.1 kHz stereo 16-bit PCM (`PCMPipeMessage`) on its standard input, a socket that `cast` holds the
// other end of. It ends when `cast` closes that socket. Not a command for people: run by `cast` only.
import CastMedia
import CastProtocol
import CastSystem

#if canImport(Glibc)
    import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    let usage = "usage: cast-decode FILE (run by cast, with a socket as its standard input)\n"
    _ = usage.withCString { write(2, $0, strlen($0)) }
    exit(2)
}
let channel = FramedStream(fd: 0, maximumFrameLength: PCMPipeMessage.maximumFrameLength)
let timeout: Duration = .seconds(10)

func reply(_ message: PCMPipeMessage) {
    do {
        try channel.send(message.frame, timeout: timeout)
    } catch {
        exit(1)  // cast is gone or stuck: nobody to answer
    }
}

let reader: PCMReader
do {
    reader = try PCMReader(path: arguments[1], sampleRate: 44_100, channels: PCMPipeMessage.channels)
} catch {
    reply(.failed("\(error)"))
    exit(1)
}
reply(.opened(duration: reader.duration))

while true {
    let request: PCMPipeMessage
    do {
        guard let frame = try channel.receive(timeout: nil) else { exit(0) }
        request = try PCMPipeMessage(frame)
    } catch {
        reply(.failed("cast-decode: \(error)"))
        exit(1)
    }
    do {
        switch request {
        case .read(let frames): reply(.samples(try reader.read(frames: frames)))
        case .seek(let seconds):
            try reader.seek(to: seconds)
            reply(.seeked)
        default:
            reply(.failed("cast-decode: a request was expected"))
            exit(1)
        }
    } catch {
        reply(.failed("\(error)"))
    }
}
