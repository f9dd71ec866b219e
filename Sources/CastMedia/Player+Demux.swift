internal import CFFmpeg
import CastProtocol
import Foundation

/// What the output threads need to know about a stream's timestamps.
struct StreamTiming: Sendable {
    /// The stream's time base.
    var timeBase: AVRational
    /// The container's start time in AV_TIME_BASE units, subtracted from every timestamp (as ffmpeg does).
    var containerStart: Int64
    /// ffmpeg's guess of the frame rate (video), 0/1 when unknown.
    var frameRate: AVRational
    /// The start time `ffmpeg -map 0:v` subtracts (AV_TIME_BASE units): for formats with timestamp
    /// discontinuities (MPEG-TS) ffmpeg takes the earliest start of the streams it uses, here the video alone.
    var mappedStart: Int64 = 0
    /// The largest jump between consecutive timestamps taken as it is (`PresentationTimeline`), as ffplay's
    /// `max_frame_duration`: 10 s in formats whose timestamps may be discontinuous (MPEG-TS, FLV: `AVFMT_TS_DISCONT`),
    /// an hour elsewhere, where a picture may legitimately stay on screen for minutes (a slideshow, a still with a
    /// podcast).
    var maxTimestampJump = PresentationTimeline.maxJump

    /// A frame's media time in seconds, or nil without a timestamp.
    func seconds(of frame: Frame) -> Double? {
        let ts = frame.pointer.pointee.best_effort_timestamp
        guard ts != cast_av_nopts_value() else { return nil }
        return Double(ts) * av_q2d(timeBase) - Double(containerStart) / Double(AV_TIME_BASE)
    }

    /// A frame's duration in seconds, from its packet or the frame rate; 0 when unknown.
    func duration(of frame: Frame) -> Double {
        let d = frame.pointer.pointee.pkt_duration
        if d > 0 { return Double(d) * av_q2d(timeBase) }
        if frameRate.num > 0 && frameRate.den > 0 { return 1 / av_q2d(frameRate) }
        return 0
    }
}

/// Packet and frame bounds between the stages (ffplay keeps about 15 MB of packets, and 3 pictures counting the one
/// on screen: 2 waiting here, as the video output holds the one shown). The demux thread stops reading well before the
/// packet bounds once every stream has a few seconds queued (`PacketBudget`); they hold where it cannot tell (no
/// durations, streams far apart in the file).
enum QueueLimits {
    static let videoPackets = (count: 4096, bytes: 16 << 20)
    static let audioPackets = (count: 4096, bytes: 4 << 20)
    static let videoFrames = 2
    static let audioFrames = 16
}

extension Player {
    /// The demux thread: opens and probes, starts the other threads, reads packets until the end, waits for the
    /// other threads and finishes. Every C handle is released here, after the threads that used it ended.
    func runDemux() {
        do {
            try demux()
        } catch {
            fail(error)
        }
        threads.wait()
        finish()
    }

    private func demux() throws {
        let opening = Monotonic.now()
        let demuxer = try Demuxer(
            input: input, sourceFormats: configuration.still ? URLInput.pictureFormatWhitelist : nil,
            interrupt: interrupt)
        let format = demuxer.context
        let seekable = source?.isSeekable ?? demuxer.isSeekable
        let size = source.map { $0.size } ?? demuxer.size
        isSeekable = seekable
        let videoStream = demuxer.bestStream(AVMEDIA_TYPE_VIDEO)
        // A track chosen before the media opened (`selectAudio`) wins over the configuration's.
        let audioLanguage = takeAudioChoice() ?? configuration.audioLanguage
        let audioStream =
            audioLanguage.flatMap { demuxer.audioStream(inLanguage: $0) } ?? demuxer.bestStream(AVMEDIA_TYPE_AUDIO)
        guard videoStream != nil || audioStream != nil else {
            throw MediaError.ffmpeg("av_find_best_stream (no audio or video stream)", status: cast_averror(ENOSYS))
        }
        let videoDecoder = try videoStream.map { try Decoder(stream: $0) }
        let audioDecoder = try audioStream.map { try Decoder(stream: $0) }
        let device: AlsaDevice? = try audioDecoder.flatMap { decoder in
            guard case .alsa(let name) = configuration.audio else { return nil }
            let codec = decoder.context.pointee
            return try AlsaDevice(
                name: name, rate: Int(codec.sample_rate), channels: min(max(configuration.audioChannels, 1), 8),
                clock: configuration.audioClock)
        }

        // What is known after probing. The load state follows the buffer from here on (Player+Buffering.swift).
        if let duration = demuxer.duration { mediaDuration = duration }
        beginBuffering(
            size: size, duration: demuxer.duration, bitRate: demuxer.bitRate, bytesRead: demuxer.bytesRead,
            openedIn: Double(Monotonic.now() - opening) / 1e9)
        if let duration = demuxer.duration { emit(.durationAvailable(duration)) }
        emit(.mediaTypes((audioDecoder != nil ? [.audio] : []) + (videoDecoder != nil ? [.video] : [])))
        if let videoStream, let par = videoStream.pointee.codecpar?.pointee, par.width > 0, par.height > 0 {
            let sar = av_guess_sample_aspect_ratio(format, videoStream, nil)
            let width = sar.num > 0 && sar.den > 0 ? Int((Double(par.width) * av_q2d(sar)).rounded()) : Int(par.width)
            // A phone video is shown turned upright (VideoTransform): its natural size is the turned one.
            let turned = VideoOrientation(stream: videoStream).swapsWidthAndHeight
            emit(.naturalSize(width: turned ? Int(par.height) : width, height: turned ? width : Int(par.height)))
        }
        var metadata = demuxer.metadata
        if !metadata.items.isEmpty || metadata.artwork { emit(.metadata(metadata)) }
        if configuration.startTime > 0 && seekable {
            try demuxer.seek(to: configuration.startTime)
        }

        // Subtitles are decoded here, on the demux thread, as they are read, and drawn by the video output.
        let movingPictures = videoStream.map { $0.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0 } ?? false
        // A sidecar file (sent with the film) is shown instead of the film's own tracks.
        var sidecar = movingPictures ? configuration.subtitleFile.flatMap { openSidecar($0) } : nil
        var subtitles = movingPictures && configuration.subtitleFile == nil ? openSubtitles(demuxer) : nil
        subtitleOverlay = sidecar?.overlay ?? subtitles?.overlay
        var audioIndex = audioStream?.pointee.index
        var audioSlot: DecoderSlot?
        announceTracks(demuxer, audio: audioIndex, subtitle: subtitles?.index, sidecar: sidecar?.codec)
        /// A track chosen while playing (`selectSubtitles`) is opened on this thread, and the tracks announced again.
        func applySubtitleChoice() {
            guard movingPictures, let choice = takeSubtitleChoice() else { return }
            let before = subtitles?.index
            subtitles = switchSubtitles(to: choice, from: subtitles, demuxer)
            if choice == "off" || subtitles?.index != before { sidecar = nil }
            announceTracks(demuxer, audio: audioIndex, subtitle: subtitles?.index, sidecar: sidecar?.codec)
        }
        applySubtitleChoice()

        // The pipeline.
        control.expect(outputs: (videoDecoder != nil ? 1 : 0) + (audioDecoder != nil ? 1 : 0))
        var routes: [Int32: BoundedQueue<Packet>] = [:]
        // Paces the demux thread by the media time queued (ffplay's rule); a seek's flush and the shutdown wake it.
        let budget = PacketBudget(
            minimumSeconds: readAhead != nil
                ? PacketBudget.secondsBehindReadAhead : PacketBudget.secondsWithoutReadAhead)
        register(budget)
        shared.withLock { $0.buffering.budget = budget }
        var timeBases: [Int32: AVRational] = [:]
        // Cover art (an attached picture: an MP3's or an M4A's) is one packet, delivered at the start and again after
        // each seek. Its decoder is drained at once so that the picture is shown from the start and stays on screen
        // while the music plays (a frame-threaded decoder would otherwise keep it until the end of the input).
        let coverArt = videoStream.flatMap {
            $0.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 ? $0.pointee.index : nil
        }
        var coverEndedSerial: Int?
        let discontinuous = format.pointee.iformat.pointee.flags & AVFMT_TS_DISCONT != 0
        let maxTimestampJump = discontinuous ? PresentationTimeline.maxJump : PresentationTimeline.maxJumpContinuous
        if let videoStream, let videoDecoder {
            // Cover art is one packet per segment: it never has enough queued, and does not hold the music back.
            let packets = BoundedQueue<Packet>(
                maxCount: QueueLimits.videoPackets.count, maxBytes: QueueLimits.videoPackets.bytes,
                budget: coverArt == nil ? budget : nil)
            let frames = BoundedQueue<Frame>(maxCount: QueueLimits.videoFrames)
            register(packets)
            register(frames)
            routes[videoStream.pointee.index] = packets
            timeBases[videoStream.pointee.index] = videoStream.pointee.time_base
            var timing = StreamTiming(
                timeBase: videoStream.pointee.time_base, containerStart: demuxer.startTime,
                frameRate: av_guess_frame_rate(format, videoStream, nil))
            timing.mappedStart = demuxer.startTime
            timing.maxTimestampJump = maxTimestampJump
            let videoStart = videoStream.pointee.start_time
            if discontinuous, videoStart != cast_av_nopts_value() {
                let start = av_rescale_q(videoStart, videoStream.pointee.time_base, cast_av_time_base_q())
                timing.mappedStart = max(start, demuxer.startTime)
            }
            let transform = VideoTransform(
                stream: videoStream, forDisplay: configuration.video.isDisplay, streamName: videoDecoder.streamName)
            // A window drops late frames here already, before their colour work (ffplay's early frame drop).
            let lateFrames = configuration.video.isDisplay ? timing : nil
            spawnThread(named: "CastMedia.video-decode") { [self] in
                runDecoder(
                    videoDecoder, packets: packets, frames: frames, transform: transform, dropLateFrames: lateFrames)
            }
            let streamName = videoDecoder.streamName
            // Cover art is shown as a media box shows a song: the picture, with the title and artist under it.
            let caption = coverArt == nil ? [] : [metadata.items["title"], metadata.items["artist"]].compactMap { $0 }
            // Without sound, the pictures pace the clock (ffplay's video master).
            let leadsClock = audioStream == nil || audioDecoder == nil
            spawnThread(named: "CastMedia.video-out") { [self, timing] in
                runVideoOutput(
                    frames: frames, timing: timing, streamName: streamName, caption: caption, leadsClock: leadsClock)
            }
        }
        if let audioStream, let audioDecoder {
            let packets = BoundedQueue<Packet>(
                maxCount: QueueLimits.audioPackets.count, maxBytes: QueueLimits.audioPackets.bytes, budget: budget)
            let frames = BoundedQueue<Frame>(maxCount: QueueLimits.audioFrames)
            register(packets)
            register(frames)
            routes[audioStream.pointee.index] = packets
            timeBases[audioStream.pointee.index] = audioStream.pointee.time_base
            var timing = StreamTiming(
                timeBase: audioStream.pointee.time_base, containerStart: demuxer.startTime, frameRate: AVRational())
            timing.maxTimestampJump = maxTimestampJump
            let slot = DecoderSlot(audioDecoder)
            audioSlot = slot
            spawnThread(named: "CastMedia.audio-decode") { [self] in
                runDecoder(slot, packets: packets, frames: frames)
            }
            let streamName = audioDecoder.streamName
            spawnThread(named: "CastMedia.audio-out") { [self, timing] in
                runAudioOutput(frames: frames, timing: timing, device: device, streamName: streamName)
            }
        }

        /// An audio track chosen while playing (`selectAudio`): its packets go to the audio queue from now on, decoded
        /// by a decoder of its own that the decode thread takes at the seek that follows; the tracks are announced
        /// again. A language no track has, or the track that plays, changes nothing.
        func applyAudioChoice() {
            guard let choice = takeAudioChoice(), let slot = audioSlot, let current = audioIndex,
                let stream = demuxer.audioStream(inLanguage: choice), stream.pointee.index != current,
                let queue = routes[current]
            else { return }
            do {
                let decoder = try Decoder(stream: stream)
                routes[current] = nil
                timeBases[current] = nil
                routes[stream.pointee.index] = queue
                timeBases[stream.pointee.index] = stream.pointee.time_base
                slot.replace(with: decoder)
                audioIndex = stream.pointee.index
                announceTracks(demuxer, audio: audioIndex, subtitle: subtitles?.index, sidecar: sidecar?.codec)
            } catch {
                configuration.log("the audio track is not changed: \(error)")
            }
        }

        // Read until the end, then wait for a seek or the end of playback: the queues' bounds pace this loop. Every
        // packet carries the serial of the segment it was read for; a seek's flush drops the older ones.
        var serial = 0
        var atEnd = false
        // ICY titles are options of FFmpeg's http protocol, not events: looked at about once a second.
        var icyChecked = Monotonic.now()
        let containerStart = Double(demuxer.startTime) / Double(AV_TIME_BASE)
        while !isStopping {
            let seek: PlaybackControl.Segment?
            if atEnd {
                guard let next = control.waitForSeek() else { break }
                seek = next
            } else {
                seek = control.takeSeek()
            }
            if let seek {
                // A track chosen while playing is opened here, before the seek that reads its events again.
                applySubtitleChoice()
                applyAudioChoice()
                // avformat_seek_file backward to the key frame at or before the target; the outputs trim to it
                // when the seek is exact. When the demuxer cannot seek, the new segment plays on from here.
                let moved = (try? demuxer.seek(to: seek.target ?? 0)) != nil
                serial = seek.serial
                if moved { subtitles?.flush() }
                if moved { inputEnded(false) }
                if moved || !atEnd {
                    atEnd = false
                    continue
                }
                for queue in routes.values { queue.put(.end, serial: serial) }
                continue
            }
            // Every stream has enough queued: wait until a stage takes some, a seek flushes, or playback stops.
            if budget.waitUntilShort() { continue }
            let packet = Packet()
            willRead()
            let read = try demuxer.read(into: packet)
            didRead(bytesRead: demuxer.bytesRead)
            guard read else {
                inputEnded(true)
                for (index, queue) in routes where index != coverArt || coverEndedSerial != serial {
                    queue.put(.end, serial: serial)
                }
                atEnd = true
                continue
            }
            if demuxer.takeMetadataUpdate() || demuxer.isURL && Monotonic.now() - icyChecked > 1_000_000_000 {
                icyChecked = Monotonic.now()
                let current = demuxer.currentMetadata
                if current != metadata {
                    metadata = current
                    emit(.metadata(current))
                }
            }
            applySubtitleChoice()
            let index = packet.pointer.pointee.stream_index
            if let subtitles, index == subtitles.index {
                subtitles.take(packet)
                continue
            }
            guard let queue = routes[index], let timeBase = timeBases[index] else { continue }
            let p = packet.pointer.pointee
            let stamp = p.pts != cast_av_nopts_value() ? p.pts : p.dts
            if stamp != cast_av_nopts_value() {
                demuxed(stream: index, upTo: Double(stamp + max(p.duration, 0)) * av_q2d(timeBase) - containerStart)
            }
            if index == coverArt {
                // Once per segment: the picture, then the end of that stream's segment.
                guard coverEndedSerial != serial else { continue }
                coverEndedSerial = serial
                // The picture carries no timestamp: it belongs at the stream's start (where ffmpeg puts it).
                if packet.pointer.pointee.pts == cast_av_nopts_value(), let videoStream {
                    let start = videoStream.pointee.start_time
                    packet.pointer.pointee.pts = start == cast_av_nopts_value() ? 0 : start
                    packet.pointer.pointee.dts = packet.pointer.pointee.pts
                }
                guard queue.put(.item(packet), serial: serial, bytes: packet.size) else { return }
                queue.put(.end, serial: serial)
                continue
            }
            let seconds = p.duration > 0 ? Double(p.duration) * av_q2d(timeBase) : 0
            guard queue.put(.item(packet), serial: serial, bytes: packet.size, seconds: seconds) else { return }
        }
        // Playback ended (or is stopping): the decoders wait for packets that will not come.
        releaseQueues()
    }

    /// A decode thread: packets in, frames out, each frame with its packet's serial. A packet of a new serial (a
    /// seek) flushes the decoder first; at the end of a segment the decoder is drained so that every frame counts.
    /// Video frames pass through `transform` (turned upright, colour for the window) on their way out. With
    /// `dropLateFrames` (a window's stream timing), a frame that the video output would drop as late (its successor
    /// already due: `LateFrameRule`) is dropped and counted before the transform, as ffplay drops frames before its
    /// filters, so that a picture too costly to convert in real time (HDR tone mapping on a small box) does not
    /// make every later frame late too; never a segment's first frame, nor one more than ffplay's no-sync threshold
    /// (10 s) late, which is a timestamp discontinuity the output re-anchors.
    func runDecoder(
        _ decoder: Decoder, packets: BoundedQueue<Packet>, frames: BoundedQueue<Frame>,
        transform: VideoTransform? = nil,
        dropLateFrames lateTiming: StreamTiming? = nil
    ) {
        runDecoder(
            DecoderSlot(decoder), packets: packets, frames: frames, transform: transform, dropLateFrames: lateTiming)
    }

    /// A decode thread whose decoder may be replaced while playing (`DecoderSlot`, the audio track chosen while
    /// playing): it takes the new one when a new serial begins, and its frames are retimed to the slot's timeline.
    func runDecoder(
        _ slot: DecoderSlot, packets: BoundedQueue<Packet>, frames: BoundedQueue<Frame>,
        transform: VideoTransform? = nil,
        dropLateFrames lateTiming: StreamTiming? = nil
    ) {
        var current = 0
        var decoder = slot.decoder
        var transformError: (any Error)?
        var deliveredInSegment = false
        func deliver(_ frame: Frame, serial: Int) -> Bool {
            if let lateTiming, deliveredInSegment, let start = lateTiming.seconds(of: frame),
                let nextDue = clock.dueTime(of: start + lateTiming.duration(of: frame))
            {
                let now = Monotonic.now()
                let late = Double(Int64(bitPattern: now &- nextDue)) / 1e9
                if LateFrameRule.drops(
                    firstOfSegment: false, duration: lateTiming.duration(of: frame), nextDue: nextDue, now: now),
                    late < PresentationTimeline.maxJump
                {
                    countDroppedFrame()
                    return true
                }
            }
            deliveredInSegment = true
            guard let transform else { return frames.put(.item(frame), serial: serial) }
            do {
                return try transform.apply(frame) { frames.put(.item($0), serial: serial) }
            } catch {
                transformError = error
                return false
            }
        }
        while let (item, serial) = packets.take() {
            if serial != current {
                decoder = slot.decoder
                decoder.flush()
                current = serial
                deliveredInSegment = false
            }
            let atEnd: Bool
            let decoding = decoder
            let handOver = { (frame: Frame) in deliver(slot.retimed(frame, from: decoding), serial: serial) }
            switch item {
            case .item(let packet):
                atEnd = false
                guard decoder.decode(packet, deliver: handOver) else {
                    if let transformError { fail(transformError) }
                    return
                }
            case .end:
                atEnd = true
                guard decoder.decode(nil, deliver: handOver) else {
                    if let transformError { fail(transformError) }
                    return
                }
            }
            // A stream whose packets all fail is an error, not silence or a still picture that "plays" to the end.
            if let error = decoder.undecodable(atEnd: atEnd) {
                fail(error)
                return
            }
            if atEnd { frames.put(.end, serial: serial) }
        }
    }
}
