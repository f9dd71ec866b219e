import CastBase
import CastProtocol
import FoundationEssentials
import Glibc
import Synchronization

/// An HTTP proxy on the loopback interface that connects only where an ``AddressPolicy`` allows: castd's fetches
/// for AirPlay clients go through it (FFmpeg's `http_proxy`), so that every connection such a fetch makes (the URL,
/// each redirect, HLS playlists, segments and keys) is checked on the address it actually reaches, at connect time.
///
/// FFmpeg speaks to it as to any proxy: `CONNECT host:port` for https (then TLS end to end through the tunnel), and
/// the absolute form `GET http://host:port/path` for http, which is passed on in the origin form a server expects
/// (`ProxiedRequests`: GET and HEAD only, each request of a kept-alive connection for the same origin). FFmpeg reuses
/// a connection only for the same host, so one connection reaches one checked address.
/// A refused address is answered `403 Forbidden`, a request that is neither form `400`, an unreachable server `502`.
///
/// It listens on a loopback only (castd's own, or a decoder worker's private one) and reaches nothing beyond its
/// policy, so it gives a local user nothing new.
///
/// Thread-safety: mutable state is in a `Mutex`; the accept loop and each connection run on threads of their own
/// (every call they make blocks).
public final class CheckedProxy: Sendable {
    /// The loopback port it listens on.
    public let port: UInt16
    /// Where it may connect.
    public let policy: AddressPolicy
    private let listenFD: Int32
    private let onRefusal: @Sendable (String) -> Void
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var stopped = false
        var connections = 0
    }

    /// The most connections at once; more are closed unanswered (a fetch uses one or two).
    public static let maximumConnections = 32
    /// The longest request head read before connecting.
    static let headLimit = 16 * 1024
    /// How long a head may take, and a connection attempt.
    static let requestTimeout: Duration = .seconds(10)
    /// A tunnel with no byte either way for this long is closed (FFmpeg's own read timeout is shorter).
    static let idleTimeout: Duration = .seconds(60)

    /// The proxy's URL, for FFmpeg's `http_proxy` option.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Starts listening on a free loopback port. `onRefusal` hears each refused connection (for the log).
    public convenience init(policy: AddressPolicy, onRefusal: @escaping @Sendable (String) -> Void = { _ in }) throws {
        let (fd, port) = try TCP.listen(host: "127.0.0.1", port: 0)
        self.init(listener: fd, port: port, policy: policy, onRefusal: onRefusal)
    }

    /// Answers on `listener`, a listening socket it now owns, bound to `port` on a loopback: castd's own, or a decoder
    /// worker's in the worker's network namespace (the worker made it and handed it over; castd accepts on it from
    /// its own namespace and connects out from there).
    public init(
        listener: Int32, port: UInt16, policy: AddressPolicy, onRefusal: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        listenFD = listener
        self.port = port
        self.policy = policy
        self.onRefusal = onRefusal
        startDetachedThread(name: "castd checked proxy") { [self] in acceptLoop() }
    }

    /// Stops accepting; tunnels already open end by themselves.
    public func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first { _ = Glibc.shutdown(listenFD, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        defer { closeDescriptor(listenFD) }
        // Failures other than its own stop (EMFILE) are not logged: the session's fetch that needed the connection fails
        // and says so.
        TCP.serve(listenFD, isStopped: { state.withLock { $0.stopped } }, onFailure: { _ in }) { fd, _ in
            let client = TCPStream(fd: fd)
            let admitted = state.withLock { state -> Bool in
                guard !state.stopped, state.connections < Self.maximumConnections else { return false }
                state.connections += 1
                return true
            }
            guard admitted else {
                client.close()
                return
            }
            startDetachedThread(name: "castd checked proxy connection") { [self] in
                serve(client)
                client.close()
                state.withLock { $0.connections -= 1 }
            }
        }
    }

    private func serve(_ client: TCPStream) {
        let deadline = ContinuousClock.now + Self.requestTimeout
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            guard buffer.count <= Self.headLimit else { return answer(client, "400 Bad Request") }
            let bytes: [UInt8]
            do {
                bytes = try client.read(maxCount: 16 * 1024, timeout: max(.zero, deadline - .now))
            } catch {
                return
            }
            if bytes.isEmpty { return }
            let searchFrom = max(0, buffer.count - 3)
            buffer += bytes
            headEnd = Self.endOfHead(buffer, from: searchFrom)
        }
        guard let headEnd, let target = Self.target(ofHead: buffer[..<headEnd]) else {
            return answer(client, "400 Bad Request")
        }
        let upstream: TCPStream
        do {
            upstream = TCPStream(
                fd: try TCP.connect(host: target.host, port: target.port, timeout: Self.requestTimeout, policy: policy))
        } catch let error as SecurityError where error.kind == .refusedAddress {
            onRefusal("\(target.host) port \(target.port): \(error.message)")
            return answer(client, "403 Forbidden")
        } catch {
            return answer(client, "502 Bad Gateway")
        }
        defer { upstream.close() }
        // Plain http: each request is passed on in the origin form (`ProxiedRequests`); a tunnel's bytes as they are.
        var requests = target.tunnel ? nil : ProxiedRequests(host: target.host, port: target.port)
        do {
            if target.tunnel {
                let established = Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)
                try client.write(established, timeout: Self.requestTimeout)
                buffer.removeFirst(headEnd)
            } else if let refusal = Self.pass(&buffer, through: &requests) {
                onRefusal("\(target.host) port \(target.port): \(refusal)")
                return answer(client, "400 Bad Request")
            }
            if !buffer.isEmpty { try upstream.write(buffer, timeout: Self.requestTimeout) }
        } catch {
            return
        }
        Self.relay(client, upstream, requests: &requests)
    }

    /// Replaces `bytes` from the client by what goes to the origin (`requests`' rewriting; unchanged for a tunnel).
    /// Why the request is refused, or nil.
    private static func pass(_ bytes: inout [UInt8], through requests: inout ProxiedRequests?) -> String? {
        guard requests != nil else { return nil }
        do {
            bytes = try requests!.feed(bytes)
            return nil
        } catch {
            return error.reason
        }
    }

    private func answer(_ client: TCPStream, _ status: String) {
        try? client.write(
            Array("HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8),
            timeout: Self.requestTimeout)
    }

    /// The index just past the first CR LF CR LF at or after `from`, nil when there is none yet.
    static func endOfHead(_ bytes: [UInt8], from: Int) -> Int? {
        var index = from
        while index + 3 < bytes.count {
            if bytes[index] == 0x0D, bytes[index + 1] == 0x0A, bytes[index + 2] == 0x0D, bytes[index + 3] == 0x0A {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// Where a proxy request goes: `CONNECT host:port HTTP/1.x` (a tunnel), or `METHOD http://host[:port]/... HTTP/1.x`
    /// (passed on as it is); nil for anything else. Credentials in the URL's userinfo are not part of the host.
    static func target(ofHead head: ArraySlice<UInt8>) -> (host: String, port: UInt16, tunnel: Bool)? {
        let line = head.prefix { $0 != 0x0D && $0 != 0x0A }
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].starts(with: Array("HTTP/1.".utf8)),
            parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        let method = String(decoding: parts[0], as: UTF8.self)
        var target = Substring(String(decoding: parts[1], as: UTF8.self))
        let tunnel = method == "CONNECT"
        if !tunnel {
            guard target.lowercased().hasPrefix("http://") else { return nil }
            target = target.dropFirst("http://".count)
            target = target.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            if let at = target.lastIndex(of: "@") { target = target[target.index(after: at)...] }
        }
        let host: Substring
        var portText: Substring?
        if target.hasPrefix("[") {
            guard let close = target.firstIndex(of: "]") else { return nil }
            host = target[target.index(after: target.startIndex)..<close]
            let rest = target[target.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = target.lastIndex(of: ":") {
            host = target[..<colon]
            portText = target[target.index(after: colon)...]
        } else {
            host = target
        }
        guard !host.isEmpty else { return nil }
        let port: UInt16
        if let portText {
            guard let value = UInt16(portText), value > 0 else { return nil }
            port = value
        } else {
            guard !tunnel else { return nil }
            port = 80
        }
        return (String(host), port, tunnel)
    }

    /// Copies bytes both ways until both sides have finished (each end-of-file is passed on as a half close), one
    /// side fails, or nothing moves for `idleTimeout`. What `a` (the client) sends goes through `requests` when there
    /// is one; a request it refuses ends the connection.
    private static func relay(_ a: TCPStream, _ b: TCPStream, requests: inout ProxiedRequests?) {
        var open = [true, true]
        let streams = [a, b]
        while open[0] || open[1] {
            var entries = streams.indices.map {
                pollfd(fd: streams[$0].fd, events: open[$0] ? Int16(POLLIN) : 0, revents: 0)
            }
            let ready: Int32
            do {
                ready = try systemCall("poll") { poll(&entries, 2, Self.idleTimeout.wholeMillisecondsRoundedUp) }
            } catch {
                return
            }
            if ready == 0 { return }
            for side in streams.indices where open[side] && entries[side].revents != 0 {
                let other = streams[1 - side]
                do {
                    var bytes = try streams[side].read(maxCount: 64 * 1024, timeout: .seconds(1))
                    if bytes.isEmpty {
                        open[side] = false
                        _ = Glibc.shutdown(other.fd, Int32(SHUT_WR))
                    } else {
                        if side == 0, pass(&bytes, through: &requests) != nil { return }
                        if !bytes.isEmpty { try other.write(bytes, timeout: Self.idleTimeout) }
                    }
                } catch {
                    return
                }
            }
        }
    }
}
