public import CastProtocol
import CastSecurity
import Foundation
import Synchronization

/// A sender's control connection to one receiver: TLS 1.3, hello, then requests.
///
/// Thread-safety: one thread reads (`receive`, or a request that waits for its reply); `send` and
/// `close()` may be called from any thread (sends are serialised by a lock).
public final class ReceiverConnection: Sendable {
    /// What the receiver said about itself when it accepted us.
    public let welcome: Welcome
    /// The TLS protocol version in use ("TLSv1.3").
    public let tlsVersion: String
    /// The receiver's id as computed from its TLS key (the id the sender will pin).
    public let peerID: String?
    private let tls: TLSConnection
    private let reader: FrameReader
    private let writeLock = Mutex(())

    private let description: ReceiverDescription

    private init(welcome: Welcome, tls: TLSConnection, reader: FrameReader, receiver: ReceiverDescription) {
        self.description = receiver
        self.welcome = welcome
        self.tls = tls
        self.reader = reader
        self.tlsVersion = tls.protocolVersion
        self.peerID = tls.peerPublicKey.map { fingerprint(ofPublicKey: $0) }
    }

    /// How long a reply may take before the receiver counts as lost.
    public static let replyTimeout: Duration = .seconds(5)

    /// Connects, completes TLS and the hello exchange.
    /// - Parameters:
    ///   - receiver: where to connect.
    ///   - configDirectory: the sender's directory holding its identity (created on first use).
    ///   - senderName: shown in the receiver's log.
    /// - Throws: `CastError`: `.connectionLost` when unreachable, `.notAuthorised` when the receiver requires pairing.
    public static func open(
        _ receiver: ReceiverDescription, configDirectory: String, senderName: String,
        timeout: Duration = .seconds(5)
    ) throws(CastError) -> ReceiverConnection {
        let (tls, peerID) = try connectChecked(receiver, configDirectory: configDirectory, timeout: timeout)
        return try greet(receiver, over: tls, peerID: peerID, configDirectory: configDirectory, senderName: senderName,
            timeout: timeout)
    }

    /// TCP, TLS, and the key check (`checkPinnedIdentity`): a connection on which nothing has been sent yet.
    static func connectChecked(_ receiver: ReceiverDescription, configDirectory: String, timeout: Duration)
        throws(CastError) -> (TLSConnection, peerID: String)
    {
        let tls = try connectTLS(to: receiver, configDirectory: configDirectory, timeout: timeout)
        // The key is checked before anything is sent: an impostor learns nothing, not even the hello.
        do {
            return (tls, try checkPinnedIdentity(receiver, peerKey: tls.peerPublicKey, configDirectory: configDirectory))
        } catch {
            tls.close()
            throw error
        }
    }

    /// The hello exchange on a connection whose key `connectChecked` proved.
    static func greet(
        _ receiver: ReceiverDescription, over tls: TLSConnection, peerID: String, configDirectory: String,
        senderName: String, timeout: Duration
    ) throws(CastError) -> ReceiverConnection {
        let reader = FrameReader(tls: tls, receiverName: receiver.name)
        do {
            try tls.write(Message.hello(Hello(name: senderName, software: "cast \(castVersion)")).frame().encoded())
        } catch {
            tls.close()
            throw CastError(.connectionLost, "lost \(printable(receiver.name)) while saying hello: \(error)")
        }
        switch try reader.next(timeout: timeout) {
        case .welcome(let welcome):
            recordAddress(of: receiver, peerID: peerID, configDirectory: configDirectory)
            return ReceiverConnection(welcome: welcome, tls: tls, reader: reader, receiver: receiver)
        case let other:
            tls.close()
            throw reader.unexpected(other, waitingFor: "welcome")
        }
    }

    /// Asks the receiver what it is doing.
    public func status() throws(CastError) -> ReceiverStatus {
        try send(.statusRequest)
        switch try receive(timeout: Self.replyTimeout) {
        case .status(let status): return status
        case let other: throw unexpected(other, waitingFor: "status")
        }
    }

    /// Sends one message.
    public func send(_ message: Message) throws(CastError) {
        try send { message }
    }

    /// Sends the message `make` makes once the write lock is held (a time request stamps itself there).
    func send(_ make: () -> Message) throws(CastError) {
        do {
            try writeLock.withLock { _ in try tls.write(make().frame().encoded(), timeout: Self.replyTimeout) }
        } catch {
            throw CastError(.connectionLost, "lost \(printable(welcome.name)): \(error)")
        }
    }

    /// The next message from the receiver; nil timeout waits for ever.
    public func receive(timeout: Duration?) throws(CastError) -> Message {
        try reader.next(timeout: timeout)
    }

    /// The error for a reply that is not the awaited one (a receiver's `error` becomes the matching CastError).
    public func unexpected(_ message: Message, waitingFor: String) -> CastError {
        reader.unexpected(message, waitingFor: waitingFor)
    }

    /// Where the connection goes: host and port (for a media connection to the same receiver).
    public var receiver: ReceiverDescription { description }

    /// Closes the connection (close_notify, then the socket). Idempotent.
    public func close() { tls.close() }
}

/// Opens a TLS connection to a receiver with the sender's identity (created on first use).
func connectTLS(to receiver: ReceiverDescription, configDirectory: String, timeout: Duration) throws(CastError)
    -> TLSConnection
{
    let identity: Identity
    do {
        identity = try Identity.loadOrCreate(directory: configDirectory)
    } catch {
        throw CastError(.usage, "cannot use the sender identity in \(configDirectory): \(error)")
    }
    do {
        let fd = try TCP.connect(host: receiver.host, port: receiver.port, timeout: timeout)
        return try TLSConnection.connect(fd: fd, identity: identity, handshakeTimeout: timeout)
    } catch {
        throw CastError(
            .connectionLost, "cannot reach \(printable(receiver.name)) at \(printable(receiver.address)): \(error)")
    }
}

/// Reads whole messages from a TLS connection. Used by one thread at a time.
final class FrameReader: @unchecked Sendable {
    // Invariant: only the thread that owns the connection's request/response cycle calls `next`.
    private let tls: TLSConnection
    private let receiverName: String
    private var decoder = FrameDecoder()

    init(tls: TLSConnection, receiverName: String) {
        self.tls = tls
        // Only ever shown: escaped once here for every message below.
        self.receiverName = printable(receiverName)
    }

    /// The next message; `timeout` bounds the wait (nil waits for ever).
    func next(timeout: Duration?) throws(CastError) -> Message {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        while true {
            do {
                if let frame = try decoder.nextFrame() { return try Message(frame) }
            } catch {
                throw CastError(.connectionLost, "\(receiverName) sent a message this sender cannot read: \(error)")
            }
            let bytes: [UInt8]
            do {
                bytes = try tls.read(maxCount: 64 * 1024, timeout: deadline.map { max(.zero, $0 - clock.now) })
            } catch {
                throw CastError(.connectionLost, "lost \(receiverName): \(error)")
            }
            if bytes.isEmpty { throw CastError(.connectionLost, "\(receiverName) closed the connection") }
            decoder.feed(bytes)
        }
    }

    /// The error for a message that is not the awaited one; a receiver's `error` becomes the matching CastError.
    func unexpected(_ message: Message, waitingFor: String) -> CastError {
        guard case .error(let error) = message else {
            return CastError(.connectionLost, "\(receiverName) sent \(message.type) while \(waitingFor) was expected")
        }
        if error.code == .busy {
            return CastError(.busy, "\(receiverName) is busy: \(printable(error.message))")
        }
        if error.code == .pairingRequired {
            return CastError(
                .notAuthorised,
                "\(receiverName) requires pairing: run cast pair \"\(receiverName)\" (\(printable(error.message)))")
        }
        return CastError(
            .connectionLost,
            "\(receiverName) closed the connection: \(printable(error.code.rawValue)): \(printable(error.message))")
    }
}
