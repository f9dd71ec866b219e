import CastAirPlay
import CastProtocol
import CastSecurity
import CastSystem
import Foundation

/// One AirPlay client's connection: HTTP/1.1 requests in, one response for each, until either side closes, or until
/// the client turns it around (`POST /reverse`): then castd sends the events of the client's session on it, as `POST
/// /event` requests the client answers (`runEvents`), and reads nothing else. When it ends, a session it started
/// still playing stops.
///
/// Runs on its own thread and is not shared: no synchronisation needed inside.
final class AirPlayConnection {
    private let stream: TCPStream
    private let client: AirPlayClient
    private unowned let service: AirPlayVideoService
    private let logger: Logger
    private var parser = HTTPRequestParser()
    /// The latest session this connection started.
    private var session: PlaybackSession?
    /// The address this connection arrived at, which a request's `Host` may name.
    private let localAddress: String?
    /// The session ID whose events this connection carries once it answered `POST /reverse`.
    private var reversedFor: String?

    init(stream: TCPStream, peer: String, service: AirPlayVideoService, logger: Logger) {
        self.stream = stream
        self.client = AirPlayClient(peer: peer)
        self.localAddress = TCP.localAddress(of: stream.fd)
        self.service = service
        self.logger = logger
    }

    private var receiver: Receiver { service.receiver }

    func run() {
        let limits = receiver.configuration.limits
        let clock = ContinuousClock()
        // When the request that is arriving began (nil between requests).
        var requestStart: ContinuousClock.Instant?
        // The bytes reserved for a large body (a picture) being received (`AirPlayVideoService.reserveBody`).
        var reservedBody = 0
        defer {
            service.releaseBody(reservedBody)
            receiver.airPlayClientLost(client)
        }
        logger.info("AirPlay client connected from \(client.peer)")
        while true {
            // A request must arrive whole within its timeout (`RequestTimeout`: longer as its body arrives); between
            // requests the connection may idle, without bound while a session it started plays (TCP keepalive finds a
            // client that vanished).
            let timeout: Duration?
            if let requestStart {
                let allowed = limits.airPlayRequestTimeout.allowed(bodyReceived: parser.receivedBodyLength ?? 0)
                timeout = max(.zero, requestStart + allowed - clock.now)
            } else if let session, !session.isFinished {
                timeout = nil
            } else {
                timeout = limits.airPlayIdleTimeout
            }
            let bytes: [UInt8]
            do {
                bytes = try stream.read(maxCount: 16 * 1024, timeout: timeout)
            } catch let error as SecurityError where error.kind == .timedOut {
                if let requestStart {
                    logger.warning(
                        "AirPlay client \(client.peer): no whole request within \(clock.now - requestStart); closing")
                    write(.refusal(HTTPRequestError(.requestTimeout, "the request took too long")), closing: true)
                } else {
                    logger.info("AirPlay client \(client.peer) idle for \(limits.airPlayIdleTimeout); closing")
                }
                return
            } catch {
                logger.info("AirPlay client \(client.peer) lost: \(error)")
                return
            }
            if bytes.isEmpty {
                logger.info("AirPlay client \(client.peer) disconnected")
                return
            }
            parser.feed(bytes)
            while true {
                let request: HTTPRequest
                do {
                    guard let next = try parser.nextRequest() else { break }
                    request = next
                } catch {
                    // The next request's start cannot be found: answer and close.
                    logger.warning("AirPlay request from \(client.peer) refused: \(error)")
                    write(.refusal(error), closing: true)
                    return
                }
                // The next request's time counts from now, if its first bytes came with this one's.
                requestStart = nil
                let response = respond(to: request)
                guard write(response, closing: !request.keepsConnectionOpen), request.keepsConnectionOpen else {
                    return
                }
                // A picture's bytes count until it is answered (shown, or kept: then the cache bounds them).
                service.releaseBody(reservedBody)
                reservedBody = 0
                if let sessionID = reversedFor { return runEvents(of: sessionID) }
            }
            if let awaited = parser.awaitedBodyLength, awaited > parser.limits.body, reservedBody == 0 {
                guard service.reserveBody(awaited) else {
                    logger.warning("AirPlay client \(client.peer): too many pictures arriving at once; refused")
                    write(
                        .refusal(HTTPRequestError(.serviceUnavailable, "too many pictures are arriving at once")),
                        closing: true)
                    return
                }
                reservedBody = awaited
            }
            requestStart = parser.hasPartialRequest ? (requestStart ?? clock.now) : nil
        }
    }

    /// Writes `response`; false when the client is gone.
    @discardableResult
    private func write(_ response: HTTPResponse, closing: Bool) -> Bool {
        do {
            try stream.write(response.encoded(closing: closing), timeout: .seconds(10))
            return true
        } catch {
            logger.info("AirPlay client \(client.peer) lost while answering: \(error)")
            return false
        }
    }

    /// The answer to one request, after carrying it out.
    private func respond(to request: HTTPRequest) -> HTTPResponse {
        guard service.hosts.accepts(request.header("Host"), localAddress: localAddress) else {
            let host = request.header("Host") ?? ""
            logger.warning(
                "AirPlay request from \(client.peer) for host \(host.prefix(100)) refused: not this receiver")
            return .refusal(HTTPRequestError(.misdirectedRequest, "Host \(host.prefix(100)) is not this receiver"))
        }
        let decoded: AirPlayRequest
        do {
            decoded = try AirPlayRequest(request)
        } catch {
            logger.warning(
                "AirPlay request \(request.method) \(request.path.prefix(100)) from \(client.peer) refused: \(error)")
            return .refusal(error)
        }
        switch decoded {
        case .play(let play):
            guard let started = receiver.airPlayPlay(play, client: client, access: service.urlAccess) else {
                return .refusal(HTTPRequestError(.serviceUnavailable, "\(receiver.name) is playing for another sender"))
            }
            session = started
            return HTTPResponse(status: .ok)
        case .playbackInfo:
            return .plist((target(of: request)?.airPlayPlayback() ?? .idle).playbackInfoBody())
        case .scrubInfo:
            return .text(.ok, (target(of: request)?.airPlayPlayback() ?? .idle).scrubText)
        case .rate(let rate):
            if let session = target(of: request) {
                if rate == 0 {
                    session.control(.pause)
                } else {
                    session.control(.resume)
                    if rate != session.snapshot().rate { session.control(.rate(rate)) }
                }
            }
            return HTTPResponse(status: .ok)
        case .seek(let seconds):
            target(of: request)?.control(.seek(position: seconds, exact: true))
            return HTTPResponse(status: .ok)
        case .stop:
            target(of: request)?.control(.stop)
            return HTTPResponse(status: .ok)
        case .serverInfo:
            return .plist(service.device.serverInfoBody())
        case .reverse(let sessionID):
            reversedFor = sessionID
            return .reverse
        case .photo(let photo):
            return show(photo)
        }
    }

    /// Carries out a `PUT /photo`: keeps the picture (`cacheOnly`), or shows it, or the one kept under its key
    /// (`displayCached`; 412 when none is, as Kodi answers, and the client sends the picture again). A picture shown is
    /// a session of this client's, like a `/play`'s; the answer waits until the picture is on screen (200), or until
    /// the decoder worker could not decode it (415).
    private func show(_ photo: AirPlayPhotoRequest) -> HTTPResponse {
        let picture: [UInt8]
        switch photo.action {
        case .cache(let key, let bytes):
            service.cachePicture(bytes, key: key, peer: client.peer)
            return HTTPResponse(status: .ok)
        case .showCached(let key):
            guard let cached = service.cachedPicture(key: key, peer: client.peer) else {
                return .refusal(HTTPRequestError(.preconditionFailed, "no picture is cached under that key"))
            }
            picture = cached
        case .show(let bytes):
            picture = bytes
        }
        guard let started = receiver.airPlayShowPicture(picture, sessionID: photo.sessionID, client: client) else {
            return .refusal(HTTPRequestError(.serviceUnavailable, "\(receiver.name) is playing for another sender"))
        }
        session = started
        if started.waitUntilShown(timeout: Self.pictureTimeout) { return HTTPResponse(status: .ok) }
        if !started.isFinished {
            logger.warning(
                "AirPlay client \(client.peer)'s picture was not shown within \(Self.pictureTimeout); stopping")
            started.end(with: .finished(reason: .playbackError, error: "the picture was not shown in time"))
            return .refusal(HTTPRequestError(.serviceUnavailable, "the picture was not shown in time"))
        }
        if started.wasEndedByReceiver {
            return .refusal(HTTPRequestError(.serviceUnavailable, "the picture was taken down before it was shown"))
        }
        logger.warning("AirPlay client \(client.peer)'s picture could not be decoded")
        return .refusal(HTTPRequestError(.unsupportedMediaType, "the picture could not be decoded"))
    }

    /// The longest a picture may take to reach the screen (a decoder worker on a loaded box) before it is given up.
    static let pictureTimeout: Duration = .seconds(20)

    /// The connection turned around for the events of `sessionID` (an iPhone's event channel): each event the
    /// session's state makes (`AirPlayEvent`: loading, playing, paused, stopped with why) is sent as a `POST /event`
    /// request when it happens, and the client's answer is read before the next (each within 10 s, bounded by
    /// `AirPlayEventAnswerReader`); a client that stops answering or reading is closed. The session may start later
    /// (the client opens this before its `/play`) and there may be several in turn. The connection idles as a request
    /// connection does: closed after `airPlayIdleTimeout` with nothing to send and no session of this ID playing.
    private func runEvents(of sessionID: String) {
        let channel = receiver.airPlayEvents.open(sessionID: sessionID)
        defer { receiver.airPlayEvents.remove(channel) }
        logger.info("AirPlay client \(client.peer) listens for the events of session \(sessionID.prefix(64))")
        let idle = receiver.configuration.limits.airPlayIdleTimeout
        var answers = AirPlayEventAnswerReader()
        while !channel.isClosed {
            let events = channel.next(timeout: idle.timeInterval)
            if events.isEmpty {
                if let session = receiver.airPlaySession(withID: sessionID), !session.isFinished { continue }
                if !channel.isClosed {
                    logger.info("AirPlay client \(client.peer)'s event channel idle for \(idle); closing")
                }
                return
            }
            for event in events {
                do {
                    try stream.write(event.request(sessionID: sessionID), timeout: .seconds(10))
                    var status: Int?
                    while status == nil {
                        let bytes = try stream.read(maxCount: 16 * 1024, timeout: .seconds(10))
                        guard !bytes.isEmpty else {
                            logger.info("AirPlay client \(client.peer) closed its event channel")
                            return
                        }
                        status = try answers.feed(bytes).first
                    }
                    if let status, !(200...299).contains(status) {
                        logger.info("AirPlay client \(client.peer) answered an event \(status)")
                    }
                } catch {
                    logger.info("AirPlay client \(client.peer)'s event channel ended: \(error)")
                    return
                }
            }
        }
    }

    /// The session a request speaks of: the one named by its `X-Apple-Session-ID` (a client may use several
    /// connections), else the one this connection started. Only AirPlay sessions: a Cast sender's is not
    /// controlled from here.
    private func target(of request: HTTPRequest) -> PlaybackSession? {
        if let id = request.header("X-Apple-Session-ID"), let named = receiver.airPlaySession(withID: id) {
            return named
        }
        return session
    }
}
