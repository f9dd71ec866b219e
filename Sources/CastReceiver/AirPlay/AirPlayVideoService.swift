import CastAirPlay
import CastBase
import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import Synchronization

/// castd's AirPlay 1 video service (`--airplay-video`): an HTTP/1.1 server on its own port that lets an AirPlay
/// client (an iPhone, pyatv) play an http(s) URL on this receiver and control it, through the same sessions,
/// engine and events as Cast senders.
///
/// Thread-safety: mutable state is inside `state` (a `Mutex`); the accept loop and each connection run on
/// their own threads because every call they make blocks. The receiver owns the service and outlives it.
final class AirPlayVideoService: Sendable {
    unowned let receiver: Receiver
    let device: AirPlayDevice
    /// The `Host` names a request may carry besides the address it arrived at (against DNS rebinding).
    let hosts: AirPlayHost
    private let logger: Logger
    private let state = Mutex(State())
    /// The proxy an AirPlay client's URL is fetched through when it is decoded inside castd (decoder isolation off),
    /// which refuses what strangers may not reach (``AddressPolicy/strangers``); a worker gets a proxy of its own on
    /// its private loopback (`URLAccess`). Started with the service.
    private let proxy = Mutex<CheckedProxy?>(nil)

    private struct State: ~Copyable {
        var listenFD: Int32 = -1
        var port: UInt16 = 0
        var stopped = false
        /// Open connections and the address each came from, so that `stop` can wake their threads and each address
        /// keeps to its share.
        var streams: [ObjectIdentifier: (stream: TCPStream, address: String)] = [:]
        /// The pictures clients keep here (`cacheOnly`), by address; an address's go when its last connection closes.
        var photos = PhotoCache()
        /// The bytes of the large bodies (pictures) being received now, on all connections.
        var bodyBytesInFlight = 0
    }

    /// The most bytes of large bodies (pictures) castd receives at once, on all connections: four 16 MiB pictures.
    /// Without it, 16 connections sending 16 MiB each would make castd hold 256 MiB (twice that while each is copied).
    static let maximumBodyBytesInFlight = 64 << 20

    /// Reserves `count` bytes for a large body about to be received; false when that would pass
    /// `maximumBodyBytesInFlight` (the request is then refused).
    func reserveBody(_ count: Int) -> Bool {
        state.withLock { state in
            guard state.bodyBytesInFlight + count <= Self.maximumBodyBytesInFlight else { return false }
            state.bodyBytesInFlight += count
            return true
        }
    }

    /// Returns bytes `reserveBody` reserved (the body arrived, or its connection ended).
    func releaseBody(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { $0.bodyBytesInFlight -= count }
    }

    init(receiver: Receiver, logger: Logger) {
        self.receiver = receiver
        self.device = AirPlayDevice(receiverID: receiver.id)
        var buffer = [CChar](repeating: 0, count: 256)
        let hostName =
            gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        self.hosts = AirPlayHost(hostName: hostName)
        self.logger = logger
    }

    /// How an AirPlay client's URL reaches the network: as a stranger's.
    var urlAccess: URLAccess {
        let logger = self.logger
        return .stranger(sharedProxy: proxy.withLock { $0?.url }) { refusal in
            logger.warning("an AirPlay client's URL was refused a connection to \(refusal)")
        }
    }

    /// Keeps `picture` under `key` for the client at `peer`'s address (`PUT /photo`, `cacheOnly`).
    func cachePicture(_ picture: [UInt8], key: String, peer: String) {
        let address = String(AirPlayHost.hostPart(of: peer))
        state.withLock { $0.photos.store(picture, key: key, client: address) }
    }

    /// The picture the client at `peer`'s address keeps under `key`, nil when it is not (or no longer) kept.
    func cachedPicture(key: String, peer: String) -> [UInt8]? {
        let address = String(AirPlayHost.hostPart(of: peer))
        return state.withLock { $0.photos.picture(key: key, client: address) }
    }

    /// The bound port, once started.
    var port: UInt16 { state.withLock { $0.port } }

    /// Binds `port` (0 = any free port) on `host` and starts accepting. Returns the bound port.
    func start(host: String, port: UInt16) throws -> UInt16 {
        let logger = self.logger
        let checked = try CheckedProxy(policy: .strangers) { refusal in
            logger.warning("an AirPlay client's URL was refused a connection to \(refusal)")
        }
        proxy.withLock { $0 = checked }
        let (fd, bound) = try TCP.listen(host: host, port: port)
        state.withLock {
            $0.listenFD = fd
            $0.port = bound
        }
        startDetachedThread(name: "castd airplay accept") { [self] in acceptLoop(fd) }
        return bound
    }

    /// Stops accepting and closes every AirPlay connection (their sessions end with them).
    func stop() {
        let (fd, streams) = state.withLock { state -> (Int32, [TCPStream]) in
            state.stopped = true
            return (state.listenFD, state.streams.values.map(\.stream))
        }
        if fd >= 0 { TCPStream(fd: fd).shutdown() }
        for stream in streams { stream.shutdown() }
        proxy.withLock { $0 }?.stop()
    }

    private func acceptLoop(_ listenFD: Int32) {
        let limits = receiver.configuration.limits
        TCP.serve(
            listenFD, isStopped: { state.withLock { $0.stopped } },
            onFailure: { logger.error("AirPlay accept failed: \($0)") }
        ) {
            fd, peer in
            let accepted = (fd: fd, peer: peer)
            let stream = TCPStream(fd: accepted.fd)
            let address = String(AirPlayHost.hostPart(of: accepted.peer))
            let refusal = state.withLock { state -> String? in
                guard !state.stopped else { return "castd is stopping" }
                guard state.streams.count < limits.maximumAirPlayConnections else {
                    return "\(limits.maximumAirPlayConnections) connections already"
                }
                let fromAddress = state.streams.values.filter { $0.address == address }.count
                guard fromAddress < limits.maximumAirPlayConnectionsPerAddress else {
                    return "\(fromAddress) connections from \(address) already"
                }
                state.streams[ObjectIdentifier(stream)] = (stream, address)
                return nil
            }
            if let refusal {
                logger.warning("AirPlay connection from \(accepted.peer) refused: \(refusal)")
                stream.close()
                return
            }
            startDetachedThread(name: "castd airplay connection") { [self] in
                AirPlayConnection(stream: stream, peer: accepted.peer, service: self, logger: logger).run()
                state.withLock { state in
                    state.streams.removeValue(forKey: ObjectIdentifier(stream))
                    if !state.streams.values.contains(where: { $0.address == address }) {
                        state.photos.forget(client: address)
                    }
                }
                stream.close()
            }
        }
        TCPStream(fd: listenFD).close()
    }
}
