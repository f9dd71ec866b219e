internal import CFFmpeg

/// One demuxed packet, owned by exactly one stage at a time.
final class Packet: @unchecked Sendable {
    // Invariant: the demux thread fills it, hands it to a queue and never touches it again; the one consumer that
    // takes it from the queue is then its only user. The queue's lock orders the hand-over.
    let pointer: UnsafeMutablePointer<AVPacket>

    init() {
        guard let pointer = av_packet_alloc() else { fatalError("av_packet_alloc: out of memory") }
        self.pointer = pointer
    }

    /// The payload size in bytes, for the queue's budget.
    var size: Int { Int(pointer.pointee.size) }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }
}

/// One decoded frame (audio or video), owned by exactly one stage at a time.
final class Frame: @unchecked Sendable {
    // Invariant: as for `Packet`: a decoder fills it and gives it away through a queue; one consumer then owns it.
    let pointer: UnsafeMutablePointer<AVFrame>

    init() {
        guard let pointer = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        self.pointer = pointer
    }

    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }
}
