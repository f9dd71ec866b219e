internal import CFFmpeg
import Foundation

extension VideoTransform {
    /// Decodes the video of the file at `path` through the transform a window (`forDisplay`) or framemd5 output
    /// would get and writes what comes out as `ffmpeg -f framemd5` does: the window's pictures (tone-mapped,
    /// 8-bit) cannot be read back from SDL bit for bit, so this is how tests compare them with the ffmpeg tool's
    /// `-vf` of the same filters. Synchronous, on the caller's thread.
    static func writeFrameMD5(ofVideoIn path: String, forDisplay: Bool, to output: String) throws {
        let demuxer = try Demuxer(input: .source(try FileSource(path: path)), interrupt: Interrupt())
        guard let stream = demuxer.bestStream(AVMEDIA_TYPE_VIDEO) else {
            throw MediaError.other("\(path) has no video stream")
        }
        let decoder = try Decoder(stream: stream)
        let transform = VideoTransform(
            stream: stream, forDisplay: forDisplay, streamName: decoder.streamName)
        let writer = try FrameMD5Writer(
            path: output, streamTimeBase: stream.pointee.time_base,
            frameRate: av_guess_frame_rate(demuxer.context, stream, nil),
            containerStartTime: demuxer.startTime)
        var failure: (any Error)?
        func deliver(_ frame: Frame) -> Bool {
            do {
                return try transform.apply(frame) { picture in
                    do {
                        try writer.write(picture)
                        return true
                    } catch {
                        failure = error
                        return false
                    }
                }
            } catch {
                failure = error
                return false
            }
        }
        let packet = Packet()
        while try demuxer.read(into: packet) {
            if packet.pointer.pointee.stream_index == stream.pointee.index {
                _ = decoder.decode(packet, deliver: deliver)
            }
            av_packet_unref(packet.pointer)
            if let failure { throw failure }
        }
        _ = decoder.decode(nil, deliver: deliver)
        if let failure { throw failure }
    }
}
