internal import CFFmpeg
import CastProtocol
import Foundation

/// The embedded subtitle track being drawn: its stream, its decoder (used by the demux thread only) and the overlay
/// the video output thread draws from.
struct SubtitleTrack {
    let index: Int32
    let decoder: Decoder
    let overlay: SubtitleOverlay
    /// The container's start (ms), subtracted from the events' times as from the frames'.
    let startOffset: Int64

    /// Decodes one packet of the track into the overlay; a packet that fails is skipped.
    func take(_ packet: Packet) {
        if let event = decoder.decodeSubtitle(packet, startOffset: startOffset) { overlay.add(event) }
    }

    /// A seek: the decoder and the overlay start afresh, the demuxer delivers the events again.
    func flush() {
        decoder.flush()
        overlay.flush()
    }
}

extension Player {
    /// The overlay the video output draws, if any (read for each frame: a track may be switched while playing).
    var subtitleOverlay: SubtitleOverlay? {
        get { shared.withLock { state in state.subtitleOverlay } }
        set { shared.withLock { state in state.subtitleOverlay = newValue } }
    }

    /// Shows the subtitle track in `language` (ISO 639, as `PlayerConfiguration.subtitleLanguage`) from now on, or none
    /// for "off" (at once). A language no track has keeps what shows. The track's events already read past are read
    /// again: playback seeks to where it is (exact), which reports `seekingForward` and the state again; on a source
    /// that cannot seek the new track shows from what the demuxer reads next.
    public func selectSubtitles(_ language: String) {
        shared.withLock { state in state.subtitleChoice = language.lowercased() }
        if language.lowercased() == "off" {
            subtitleOverlay = nil
            // The demux thread may be waiting at the end of the input: the change is announced from here.
            let tracks = shared.withLock { state in state.tracks }
            if !tracks.isEmpty {
                announce(
                    tracks.map { track in
                        var track = track
                        if track.kind == .subtitle { track.selected = false }
                        return track
                    })
            }
        } else if shared.withLock({ state in state.clockStarted }) {
            // Before playback starts, the choice is taken when the media opens (no seek: the start time holds).
            seek(to: clock.position(), exact: true)
        }
    }

    /// The choice made with `selectSubtitles`, taken once by the demux thread.
    func takeSubtitleChoice() -> String? {
        shared.withLock { state in
            defer { state.subtitleChoice = nil }
            return state.subtitleChoice
        }
    }

    /// The demux thread switches to the track `choice` names: "off" drops the track; a language opens that track
    /// (the current one when it is already that). A language no track has keeps `current`.
    func switchSubtitles(to choice: String, from current: SubtitleTrack?, _ demuxer: Demuxer) -> SubtitleTrack? {
        if choice == "off" {
            subtitleOverlay = nil
            return nil
        }
        guard let stream = demuxer.subtitleStream(language: choice),
            let language = Demuxer.language(of: stream), Demuxer.matches(language, choice)
        else { return current }
        if let current, current.index == stream.pointee.index {
            subtitleOverlay = current.overlay
            return current
        }
        let track = openSubtitles(demuxer, stream: stream)
        subtitleOverlay = track?.overlay
        return track
    }

    /// Opens the subtitle track to show (`Demuxer.subtitleStream`), with the container's fonts. A track that cannot be
    /// opened is reported to the configuration's log and the film plays without it: subtitles never stop a film.
    func openSubtitles(_ demuxer: Demuxer, stream chosen: UnsafeMutablePointer<AVStream>? = nil) -> SubtitleTrack? {
        guard let stream = chosen ?? demuxer.subtitleStream(language: configuration.subtitleLanguage) else {
            return nil
        }
        do {
            let decoder = try Decoder(stream: stream)
            let overlay = try SubtitleOverlay(
                header: decoder.subtitleHeader, fonts: demuxer.attachedFonts, log: configuration.log)
            return SubtitleTrack(
                index: stream.pointee.index, decoder: decoder, overlay: overlay, startOffset: demuxer.startTime / 1000)
        } catch {
            configuration.log("subtitles not shown: \(error)")
            return nil
        }
    }

    /// Draws the subtitles shown at `frame`'s time into it, before any presenter sees it.
    func burnSubtitles(into frame: Frame, timing: StreamTiming) throws {
        guard let overlay = subtitleOverlay, let seconds = timing.seconds(of: frame) else { return }
        try overlay.burn(into: frame, at: Int64((seconds * 1000).rounded(.down)))
    }
}

extension Player {
    /// Emits the media's audio and subtitle tracks (`tracks`), marking the audio stream that plays, and the subtitle
    /// track shown (`subtitle`, or the sidecar file, listed last with index -1, when `sidecar` names its codec).
    func announceTracks(_ demuxer: Demuxer, audio: Int32?, subtitle: Int32?, sidecar: String?) {
        var tracks: [MediaTrack] = []
        for index in 0..<Int(demuxer.context.pointee.nb_streams) where tracks.count < MediaTrack.maximumCount - 1 {
            guard let stream = demuxer.context.pointee.streams[index], let par = stream.pointee.codecpar else {
                continue
            }
            let kind: MediaTrack.Kind
            switch par.pointee.codec_type {
            case AVMEDIA_TYPE_AUDIO: kind = .audio
            case AVMEDIA_TYPE_SUBTITLE: kind = .subtitle
            default: continue
            }
            let title = av_dict_get(stream.pointee.metadata, "title", nil, 0).map { String(cString: $0.pointee.value) }
            let selected = kind == .audio ? Int32(index) == audio : Int32(index) == subtitle && sidecar == nil
            tracks.append(
                MediaTrack(
                    index: index, kind: kind, language: Demuxer.language(of: stream).map { String($0.prefix(16)) },
                    title: title.map { String($0.prefix(256)) },
                    codec: String(cString: avcodec_get_name(par.pointee.codec_id)), selected: selected))
        }
        if let sidecar {
            tracks.append(
                MediaTrack(index: -1, kind: .subtitle, language: nil, title: nil, codec: sidecar, selected: true))
        }
        announce(tracks)
    }

    /// Emits `tracks` and keeps them for `selectSubtitles`.
    private func announce(_ tracks: [MediaTrack]) {
        shared.withLock { state in state.tracks = tracks }
        emit(.tracks(tracks))
    }
}

extension Demuxer {
    /// The subtitle stream to show: with `language` (ISO 639, as `audioStream(inLanguage:)` matches it) the first
    /// track in that language, "off" none; otherwise the track marked forced, else the one marked default (what mpv
    /// shows by default); none when no track is marked. Only tracks with a decoder count.
    func subtitleStream(language: String?) -> UnsafeMutablePointer<AVStream>? {
        var candidates: [UnsafeMutablePointer<AVStream>] = []
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[index], let par = stream.pointee.codecpar,
                par.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE, avcodec_find_decoder(par.pointee.codec_id) != nil
            else { continue }
            candidates.append(stream)
        }
        if let language = language?.lowercased() {
            if language == "off" { return nil }
            if let match = candidates.first(where: { Self.language(of: $0).map { Self.matches($0, language) } ?? false }
            ) {
                return match
            }
        }
        return candidates.first { $0.pointee.disposition & AV_DISPOSITION_FORCED != 0 }
            ?? candidates.first { $0.pointee.disposition & AV_DISPOSITION_DEFAULT != 0 }
    }

    /// A stream's language tag, lower-cased.
    static func language(of stream: UnsafeMutablePointer<AVStream>) -> String? {
        av_dict_get(stream.pointee.metadata, "language", nil, 0).map { String(cString: $0.pointee.value).lowercased() }
    }

    /// Whether a track tagged `code` is in `wanted` ("fra" or "fr" both match "fra").
    static func matches(_ code: String, _ wanted: String) -> Bool {
        code == wanted || (wanted.count == 2 && code.count == 3 && code.hasPrefix(wanted))
    }

    /// The fonts a Matroska file carries as attachments (ASS subtitles are styled with them), at most 32 of at most
    /// 16 MB each.
    var attachedFonts: [(name: String, data: [UInt8])] {
        var fonts: [(name: String, data: [UInt8])] = []
        for index in 0..<Int(context.pointee.nb_streams) {
            guard fonts.count < 32, let stream = context.pointee.streams[index], let par = stream.pointee.codecpar,
                par.pointee.codec_type == AVMEDIA_TYPE_ATTACHMENT, let extradata = par.pointee.extradata,
                par.pointee.extradata_size > 0, par.pointee.extradata_size <= 16 << 20
            else { continue }
            let name = av_dict_get(stream.pointee.metadata, "filename", nil, 0).map {
                String(cString: $0.pointee.value)
            }
            let mime = av_dict_get(stream.pointee.metadata, "mimetype", nil, 0).map {
                String(cString: $0.pointee.value)
            }
            let isFont =
                (mime?.contains("font") ?? false) || (mime?.contains("truetype") ?? false)
                || [".ttf", ".otf", ".ttc"].contains { name?.lowercased().hasSuffix($0) ?? false }
            guard isFont else { continue }
            fonts.append(
                (
                    name ?? "font\(index)",
                    Array(UnsafeBufferPointer(start: extradata, count: Int(par.pointee.extradata_size)))
                ))
        }
        return fonts
    }
}

extension Player {
    /// The overlay of a sidecar subtitle file (`PlayerConfiguration.subtitleFile`): opened with FFmpeg like any
    /// input (it tells SRT, ASS, WebVTT … apart), every event decoded at once (the file is at most a few MB), so that
    /// seeks need nothing. nil when the file holds no subtitle stream FFmpeg can decode (reported, never fatal).
    func openSidecar(_ bytes: [UInt8]) -> (overlay: SubtitleOverlay, codec: String)? {
        do {
            let file = MemorySource(bytes: Array(bytes.prefix(Int(SubtitleFile.maximumSize))))
            let demuxer = try Demuxer(source: file, interrupt: interrupt)
            guard let stream = demuxer.subtitleStream(language: nil) ?? demuxer.firstSubtitleStream else {
                throw MediaError.ffmpeg("the subtitle file has no subtitle stream", status: cast_averror(ENOSYS))
            }
            let decoder = try Decoder(stream: stream)
            let overlay = try SubtitleOverlay(header: decoder.subtitleHeader, log: configuration.log)
            let packet = Packet()
            while try demuxer.read(into: packet) {
                if packet.pointer.pointee.stream_index == stream.pointee.index,
                    let event = decoder.decodeSubtitle(packet, startOffset: 0)
                {
                    overlay.add(event)
                }
                av_packet_unref(packet.pointer)
            }
            return (overlay, String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id)))
        } catch {
            configuration.log("the subtitle file is not shown: \(error)")
            return nil
        }
    }
}

extension Demuxer {
    /// The first subtitle stream with a decoder (a sidecar file's one stream carries no default flag).
    var firstSubtitleStream: UnsafeMutablePointer<AVStream>? {
        (0..<Int(context.pointee.nb_streams)).lazy.compactMap { self.context.pointee.streams[$0] }.first {
            $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
                && avcodec_find_decoder($0.pointee.codecpar.pointee.codec_id) != nil
        }
    }
}
