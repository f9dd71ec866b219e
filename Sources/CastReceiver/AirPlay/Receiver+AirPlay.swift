import CastAirPlay
import CastMedia
import CastProtocol

extension Receiver {
    /// Plays what an AirPlay client's `/play` asks for, through the same sessions, take-over policy, engine and
    /// events as a Cast sender's URL, except that it reaches the network as a stranger's URL does (`access`: every
    /// connection through a ``CheckedProxy``, no loopback, link-local, multicast or own address, and only the
    /// formats strangers may open). Nil when the take-over policy refuses it.
    func airPlayPlay(_ play: AirPlayPlayRequest, client: AirPlayClient, access: URLAccess) -> PlaybackSession? {
        var request = PlayRequest(title: play.url, url: play.url)
        var fraction: Double?
        switch play.start {
        case .seconds(let seconds): request.startTime = seconds > 0 ? seconds : nil
        case .fraction(let value): fraction = value > 0 ? value : nil
        }
        guard
            let session = beginSession(
                request, senderName: "AirPlay client \(client.peer)", owner: .airPlayClient(client),
                startFraction: fraction, airPlaySessionID: play.sessionID, urlAccess: access)
        else { return nil }
        // Nothing to tell the client first (it polls): the engine opens the URL at once.
        session.startURL()
        return session
    }

    /// Shows an AirPlay client's picture (`PUT /photo`) in session `sessionID`: a session like a `/play`'s, under the
    /// same take-over policy, whose media is the picture held in castd's memory and served to the engine (in the
    /// decoder worker) like a sender's file; the engine holds the picture on screen until the session is stopped or
    /// replaced. Nil when the take-over policy refuses it.
    func airPlayShowPicture(_ bytes: [UInt8], sessionID: String, client: AirPlayClient) -> PlaybackSession? {
        let kind = PictureFormat(of: bytes).map { "a \($0.rawValue.uppercased()) photo" } ?? "a photo"
        let request = PlayRequest(
            title: kind, media: MediaDescriptor(size: Int64(bytes.count), seekable: true, nameHint: nil))
        guard
            let session = beginSession(
                request, senderName: "AirPlay client \(client.peer)", owner: .airPlayClient(client),
                airPlaySessionID: sessionID, picture: MemorySource(bytes: bytes))
        else { return nil }
        session.startPicture()
        return session
    }

    /// The AirPlay session started with `X-Apple-Session-ID` `id`, if it is the one that plays.
    func airPlaySession(withID id: String) -> PlaybackSession? {
        guard let session = currentSession, session.airPlaySessionID == id,
            case .airPlayClient = session.owner
        else { return nil }
        return session
    }

    /// An AirPlay connection ended: the session it started, if still playing, stops (as when a Cast sender is
    /// lost: a `playbackError` finish saying so). pyatv stops playback exactly this way.
    func airPlayClientLost(_ client: AirPlayClient) {
        guard let session = currentSession, session.belongs(to: .airPlayClient(client)), !session.isFinished else {
            return
        }
        logger.info("the AirPlay client \(client.peer) closed its connection; stopping")
        session.end(with: .finished(reason: .playbackError, error: "the AirPlay client was lost"))
    }
}
