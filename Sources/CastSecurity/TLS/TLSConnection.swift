internal import COpenSSL
import CastSystem
import FoundationEssentials
import Glibc
import Synchronization

/// A TLS 1.3 connection over a connected TCP socket, authenticated by raw Ed25519 keys rather than a CA.
///
/// Each side presents a self-signed certificate made from its `Identity`. OpenSSL's certificate
/// verification is switched off (every certificate is accepted); instead the peer's raw public key is exposed
/// as `peerPublicKey` so the caller can pin it. The server requests, but does not require, a client
/// certificate; the client always presents one.
///
/// **Threads.** One thread may `read` while another `write`s, and any thread may call `shutdown()` or
/// `close()` at any time. The socket stays non-blocking; every `SSL_*` call on the shared `SSL` object runs
/// under one lock, and the lock is released while a thread waits in poll(2) for the socket, so a reader
/// parked waiting for data never blocks a writer. Two concurrent readers (or two concurrent writers) are not
/// supported: their bytes would interleave unpredictably.
///
/// **SIGPIPE.** Records are sent with `send(MSG_NOSIGNAL)`, so writing to a vanished peer throws `EPIPE`
/// instead of killing the process; executables need not ignore SIGPIPE for this class.
public final class TLSConnection: @unchecked Sendable {
    // @unchecked Sendable invariant: `ssl`, `isClosed`, `isBroken`, `descriptorClosed` and `waiters` are
    // only touched with `lock` held; `fd`, `peerPublicKey` and `protocolVersion` are immutable.

    /// The peer's raw 32-byte Ed25519 public key from its certificate; `nil` if it sent no certificate
    /// (a client that chose not to) or its key is not Ed25519.
    public let peerPublicKey: [UInt8]?

    /// The negotiated protocol version as OpenSSL names it; always "TLSv1.3".
    public let protocolVersion: String

    private let fd: Int32
    private let ssl: SSLSession
    private let lock = Mutex(())
    /// `close()` was called: no more `SSL_*` calls.
    private var isClosed = false
    /// A fatal TLS error happened; OpenSSL forbids `SSL_shutdown` afterwards.
    private var isBroken = false
    private var descriptorClosed = false
    /// Threads waiting in poll(2) on `fd`. The descriptor is closed only when this is zero, so a waiting
    /// thread never polls a closed (or, worse, reused) descriptor number.
    private var waiters = 0

    private init(fd: Int32, ssl: SSLSession, peerPublicKey: [UInt8]?, protocolVersion: String) {
        self.fd = fd
        self.ssl = ssl
        self.peerPublicKey = peerPublicKey
        self.protocolVersion = protocolVersion
    }

    deinit { close() }

    /// Runs the server side of the handshake on `fd`, an accepted TCP socket.
    ///
    /// The connection takes ownership of `fd` in every case: on success `close()` closes it, and if the
    /// handshake fails the descriptor is closed before this throws. Do not close `fd` yourself.
    /// Throws `.tls` at once if the peer does not speak TLS 1.3, `.timedOut` if it has not finished the
    /// handshake within `handshakeTimeout`.
    public static func accept(fd: Int32, identity: Identity, handshakeTimeout: Duration) throws -> TLSConnection {
        try handshake(
            fd: fd, context: try context(identity.credentials, server: true, fd: fd), isServer: true,
            timeout: handshakeTimeout)
    }

    /// Runs the client side of the handshake on `fd`, a connected TCP socket, presenting `identity`.
    ///
    /// Takes ownership of `fd` exactly as `accept(fd:identity:handshakeTimeout:)` does.
    public static func connect(fd: Int32, identity: Identity, handshakeTimeout: Duration) throws -> TLSConnection {
        try handshake(
            fd: fd, context: try context(identity.credentials, server: false, fd: fd), isServer: false,
            timeout: handshakeTimeout)
    }

    /// The credentials' context for one side, made on first use; `fd` is closed when it cannot be made (the
    /// connection owns it from the start).
    private static func context(_ credentials: TLSCredentials, server: Bool, fd: Int32) throws -> SSLContext {
        do {
            return try credentials.context(server: server)
        } catch {
            closeDescriptor(fd)
            throw error
        }
    }

    private static func handshake(fd: Int32, context: SSLContext, isServer: Bool, timeout: Duration) throws
        -> TLSConnection
    {
        do {
            try setNonBlocking(fd, true)
            guard let pointer = SSL_new(context.pointer) else {
                throw SecurityError.openSSL("SSL_new", "out of memory")
            }
            let ssl = SSLSession(owning: pointer)
            let bio = try SocketBIO.make(fd: fd)
            SSL_set_bio(pointer, bio, bio)  // the SSL now owns the BIO (one reference for each direction)
            if isServer { SSL_set_accept_state(pointer) } else { SSL_set_connect_state(pointer) }

            let deadline = ContinuousClock.now + timeout
            while true {
                ERR_clear_error()
                let result = SSL_do_handshake(pointer)
                if result == 1 { break }
                let savedErrno = errno
                switch SSL_get_error(pointer, result) {
                case SSL_ERROR_WANT_READ:
                    try waitUntilReady(
                        fd, events: Int16(POLLIN), deadline: deadline, limit: timeout, operation: "TLS handshake")
                case SSL_ERROR_WANT_WRITE:
                    try waitUntilReady(
                        fd, events: Int16(POLLOUT), deadline: deadline, limit: timeout, operation: "TLS handshake")
                case let code:
                    throw failure(code, errno: savedErrno, function: "SSL_do_handshake", during: "TLS handshake")
                }
            }
            return TLSConnection(
                fd: fd, ssl: ssl, peerPublicKey: peerKey(of: pointer),
                protocolVersion: String(cString: SSL_get_version(pointer)))
        } catch {
            closeDescriptor(fd)
            throw error
        }
    }

    private static func peerKey(of ssl: OpaquePointer) -> [UInt8]? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        guard let key = X509_get0_pubkey(certificate) else { return nil }
        return rawEd25519PublicKey(of: key)
    }

    /// Reads up to `maxCount` decrypted bytes, waiting at most `timeout` (`nil`: forever) for any to arrive.
    ///
    /// Returns as many bytes as are ready once some have arrived: every TLS record already received, up to
    /// `maxCount` (one `SSL_read_ex` yields one record, 16 KiB at most, so a large read takes several). Returns
    /// `[]` at the end of the stream: the peer sent close_notify or closed TCP, or `shutdown()` was called. Throws
    /// `.timedOut` when `timeout` passes; the connection stays usable and the read may be retried. Throws `.closed`
    /// if `close()` is called before or during the read.
    public func read(maxCount: Int, timeout: Duration?) throws -> [UInt8] {
        precondition(maxCount > 0, "maxCount must be positive")
        // Not zero-filled: a large read allocates fresh pages, and clearing them cost more than decrypting into them.
        return try [UInt8](unsafeUninitializedCapacity: maxCount) { storage, initialized in
            initialized = try read(into: UnsafeMutableRawBufferPointer(storage), timeout: timeout)
        }
    }

    /// `read(maxCount:timeout:)` into memory the caller keeps (a buffer used again for every read costs no fresh
    /// pages): returns how many bytes were written at its start, 0 at the end of the stream.
    public func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration?) throws -> Int {
        let maxCount = buffer.count
        precondition(maxCount > 0, "the buffer must not be empty")
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let base = buffer.baseAddress!
        var initialized = 0
        while initialized < maxCount {
            let outcome: Outcome
            do {
                outcome = try withSSL { ssl in
                    var count = 0
                    let result = SSL_read_ex(ssl, base + initialized, maxCount - initialized, &count)
                    if result == 1 { return .done(count) }
                    return try interpret(result, function: "SSL_read_ex", during: "TLS read", endOfStream: .done(0))
                }
            } catch  where initialized > 0 {
                // The bytes already read are the caller's; the failure repeats on the next read.
                return initialized
            }
            switch outcome {
            case .done(0): return initialized
            case .done(let count): initialized += count
            case .wait where initialized > 0: return initialized
            case .wait(let events):
                try wait(events: events, deadline: deadline, limit: timeout, operation: "TLS read")
            }
        }
        return initialized
    }

    /// Encrypts and sends all of `bytes`, waiting while the socket is full, at most `timeout` (`nil`: forever).
    ///
    /// After a `.timedOut` error part of a record may have been sent, so the connection must be closed.
    /// Throws (e.g. `EPIPE` as `.tls` with `errno`) if the peer has gone; never raises SIGPIPE.
    public func write(_ bytes: [UInt8], timeout: Duration? = nil) throws {
        try bytes.withUnsafeBytes { try write($0, timeout: timeout) }
    }

    /// `write(_:timeout:)` from memory the caller keeps.
    public func write(_ bytes: UnsafeRawBufferPointer, timeout: Duration? = nil) throws {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var offset = 0
        while offset < bytes.count {
            let outcome: Outcome = try withSSL { ssl in
                var count = 0
                let result = SSL_write_ex(ssl, bytes.baseAddress! + offset, bytes.count - offset, &count)
                if result == 1 { return .done(count) }
                return try interpret(result, function: "SSL_write_ex", during: "TLS write", endOfStream: nil)
            }
            switch outcome {
            case .done(let count): offset += count
            case .wait(let events): try wait(events: events, deadline: deadline, limit: timeout, operation: "TLS write")
            }
        }
    }

    /// Derives `length` bytes from this session's secrets (RFC 8446 section 7.5, `SSL_export_keying_material`).
    ///
    /// Both ends get the same bytes for the same `label` and `context`, and no other session does, which
    /// binds a pairing proof to this very connection.
    public func exportKeyingMaterial(label: String, length: Int, context: [UInt8]? = nil) throws -> [UInt8] {
        precondition(length > 0, "length must be positive")
        var output = [UInt8](repeating: 0, count: length)
        let labelBytes = Array(label.utf8)
        try withSSL { ssl in
            let result = labelBytes.withUnsafeBufferPointer { labelPointer in
                (context ?? []).withUnsafeBufferPointer { contextPointer in
                    labelPointer.withMemoryRebound(to: CChar.self) { label in
                        SSL_export_keying_material(
                            ssl, &output, length, label.baseAddress, label.count,
                            contextPointer.baseAddress, contextPointer.count, context == nil ? 0 : 1)
                    }
                }
            }
            try requireOne(result, "SSL_export_keying_material", "cannot export keying material")
        }
        return output
    }

    /// Sends close_notify (best effort, without waiting) and closes the socket. Idempotent; also run by `deinit`.
    ///
    /// A thread blocked in `read` or `write` is woken and gets `.closed`; the descriptor itself is closed
    /// once no thread is waiting on it.
    public func close() {
        lock.withLock { _ in closeLocked() }
    }

    private func closeLocked() {
        guard !isClosed else { return }
        isClosed = true
        if !isBroken {
            ERR_clear_error()
            _ = SSL_shutdown(ssl.pointer)
            ERR_clear_error()
        }
        if waiters > 0 {
            _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))  // wakes the waiters; the last one closes fd
        } else {
            closeDescriptorLocked()
        }
    }

    /// Shuts the socket down in both directions (shutdown(2)) without closing it, so that a `read` blocked in
    /// another thread returns `[]` promptly and further writes fail. Idempotent. Call `close()` afterwards.
    public func shutdown() {
        lock.withLock { _ in
            if !descriptorClosed { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    // MARK: - Locking and waiting

    private enum Outcome {
        /// The call finished, having moved this many bytes (0 on a read: end of stream).
        case done(Int)
        /// The call needs the socket to become ready for `events` (POLLIN or POLLOUT) first.
        case wait(events: Int16)
    }

    /// Runs `body` with the lock held, on a clean OpenSSL error queue; throws `.closed` after `close()`.
    private func withSSL<Result: Sendable>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        try lock.withLock { _ throws -> Result in
            guard !isClosed else { throw SecurityError(.closed, "the TLS connection is closed") }
            ERR_clear_error()
            return try body(ssl.pointer)
        }
    }

    /// Waits without the lock for the socket, then unregisters as a waiter (closing the descriptor if `close()`
    /// ran meanwhile and this was the last waiter). Throws `.closed` if the connection was closed meanwhile.
    private func wait(events: Int16, deadline: ContinuousClock.Instant?, limit: Duration?, operation: String) throws {
        var waitError: (any Error)?
        do {
            try waitUntilReady(fd, events: events, deadline: deadline, limit: limit, operation: operation)
        } catch {
            waitError = error
        }
        try lock.withLock { _ throws in
            waiters -= 1
            if isClosed {
                if waiters == 0 { closeDescriptorLocked() }
                throw SecurityError(.closed, "the TLS connection was closed during the \(operation)")
            }
            if let waitError { throw waitError }
        }
    }

    private func closeDescriptorLocked() {
        guard !descriptorClosed else { return }
        descriptorClosed = true
        closeDescriptor(fd)
    }

    /// Turns a failed `SSL_read_ex`/`SSL_write_ex` into what to do next. Called with the lock held; a `.wait`
    /// registers the calling thread as a waiter before the lock is released (see `waiters`).
    /// `endOfStream` is the outcome for a peer that has finished sending, or `nil` if that is an error.
    private func interpret(_ result: Int32, function: String, during operation: String, endOfStream: Outcome?) throws
        -> Outcome
    {
        let savedErrno = errno
        let code = SSL_get_error(ssl.pointer, result)
        if let endOfStream {
            if code == SSL_ERROR_ZERO_RETURN { return endOfStream }
            if code == SSL_ERROR_SYSCALL && savedErrno == 0 && ERR_peek_error() == 0 {
                // An EOF OpenSSL did not classify (no close_notify): the end of the stream all the same.
                isBroken = true
                return endOfStream
            }
        }
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            waiters += 1
            return .wait(events: Int16(code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT))
        default:
            isBroken = true
            throw Self.failure(code, errno: savedErrno, function: function, during: operation)
        }
    }

    /// The error for a fatal `SSL_get_error` result, with OpenSSL's error string or the socket's errno.
    private static func failure(_ code: Int32, errno savedErrno: Int32, function: String, during operation: String)
        -> SecurityError
    {
        let details = drainOpenSSLErrors()
        switch code {
        case SSL_ERROR_SYSCALL where details.isEmpty:
            if savedErrno == 0 || savedErrno == EAGAIN {
                return SecurityError(.tls, function: function, "\(operation) failed: the peer closed the connection")
            }
            return SecurityError(.tls, function: function, errno: savedErrno, "\(operation) failed: socket error")
        case SSL_ERROR_ZERO_RETURN:
            return SecurityError(.tls, function: function, "\(operation) failed: the peer closed the connection")
        default:
            let reason = details.isEmpty ? "SSL_get_error = \(code)" : details
            return SecurityError(.tls, function: function, "\(operation) failed: \(reason)")
        }
    }
}
