public import CastProtocol
import CastDiscovery
import CastSecurity
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The receiving service that `castd` runs: it listens for senders over TLS, answers them, and
/// advertises itself over mDNS.
///
/// Thread-safety: all mutable state is inside `state` (a `Mutex`); the accept loop and each
/// connection run on their own threads because every call they make blocks.
public final class Receiver: Sendable {
    /// The configuration it runs with.
    public let configuration: ReceiverConfiguration
    /// The receiver's id: the fingerprint of its public key.
    public let id: String
    private let identity: Identity
    private let logger: Logger
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var listenFD: Int32 = -1
        var port: UInt16 = 0
        var connections = 0
        var advertiser: Advertiser?
        var stopped = false
    }

    /// Loads (or creates) the identity in the state directory.
    /// - Throws: when the state directory or the key cannot be used; the message says why.
    public init(configuration: ReceiverConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        self.identity = try Identity.loadOrCreate(directory: configuration.stateDirectory)
        self.id = identity.fingerprint
    }

    /// What a sender learns from the advertisement.
    public var serviceRecord: ServiceRecord {
        ServiceRecord(id: id, friendlyName: configuration.name, features: [], auth: configuration.auth)
    }

    /// The port it listens on, once started.
    public var port: UInt16 { state.withLock { $0.port } }

    /// Binds the port, starts accepting and advertising. Returns the bound port.
    @discardableResult
    public func start() throws -> UInt16 {
        let (fd, port) = try TCP.listen(host: configuration.listenAddress, port: configuration.port)
        state.withLock {
            $0.listenFD = fd
            $0.port = port
        }
        logger.info("listening on port \(port) (address \(configuration.listenAddress), id \(id), auth \(configuration.auth.rawValue))")
        let thread = Thread { [self] in acceptLoop(fd) }
        thread.name = "castd accept"
        thread.start()
        if configuration.advertise { startAdvertising(port: port) }
        return port
    }

    /// Stops advertising and accepting. Connections in progress end when their peers go.
    public func stop() {
        let (fd, advertiser) = state.withLock { state -> (Int32, Advertiser?) in
            state.stopped = true
            defer { state.advertiser = nil }
            return (state.listenFD, state.advertiser)
        }
        advertiser?.stop()
        if fd >= 0 { _ = shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// The status a `statusRequest` is answered with.
    func currentStatus() -> ReceiverStatus {
        ReceiverStatus(name: configuration.name, id: id, state: .stopped)
    }

    private func startAdvertising(port: UInt16) {
        let ad = ServiceAdvertisement(name: configuration.name, port: port, txt: serviceRecord.txt)
        let logger = self.logger
        let listenPort = port
        let advertiser = Advertiser(ad) { event in
            switch event {
            case .published(let name):
                logger.info("advertised as \"\(name)\" (\(serviceType)) on mDNS")
            case .renamed(let from, let to):
                logger.warning("the name \"\(from)\" is taken on this network; advertised as \"\(to)\" instead")
            case .daemonUnavailable(let reason):
                logger.warning(
                    "not advertised: \(reason); senders can still connect with --to HOST:\(listenPort)")
            case .failed(let reason):
                logger.error("advertising failed: \(reason); senders can still connect with --to HOST:\(listenPort)")
            }
        }
        state.withLock { $0.advertiser = advertiser }
        advertiser.start()
    }

    private func acceptLoop(_ listenFD: Int32) {
        while true {
            let accepted: (fd: Int32, peer: String)
            do {
                accepted = try TCP.accept(listenFD)
            } catch {
                if state.withLock({ $0.stopped }) { break }
                logger.error("accept failed: \(error)")
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            let admitted = state.withLock { state -> Bool in
                guard state.connections < configuration.limits.maximumConnections else { return false }
                state.connections += 1
                return true
            }
            guard admitted else {
                logger.warning("connection from \(accepted.peer) refused: \(configuration.limits.maximumConnections) connections already")
                close(accepted.fd)
                continue
            }
            let thread = Thread { [self] in
                defer { state.withLock { $0.connections -= 1 } }
                ControlConnection(fd: accepted.fd, peer: accepted.peer, receiver: self, logger: logger).run()
            }
            thread.name = "castd connection"
            thread.start()
        }
        close(listenFD)
    }

    // Exposed to the connection.
    var identityForConnections: Identity { identity }
}
