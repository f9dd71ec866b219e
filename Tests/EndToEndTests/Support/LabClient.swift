import CastProtocol
import CastSecurity
import CastSystem
import Foundation
import XCTest

/// A raw protocol client on one of the lab's hosts, for messages `cast` has no verb for. Its socket is made inside the
/// host's network namespace by a thread of its own (setns changes only the calling thread's namespace, and a socket
/// keeps the namespace it was made in), then used from the test's thread.
final class LabClient {
    private let tls: TLSConnection
    private var decoder = FrameDecoder()
    private var pending: [Message] = []

    /// Connects from `host` to `address`:`port` over TLS with `identity` and says hello.
    init(lab: Lab, from host: Lab.Host, to address: String, port: UInt16, identity: Identity) throws {
        let namespace = "/var/run/netns/\(lab.name)-\(host.rawValue)"
        let box = ConnectResult()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            // setns(2) is behind _GNU_SOURCE in glibc's headers, which Swift's Glibc module does not see.
            typealias SetNS = @convention(c) (Int32, Int32) -> Int32
            let cloneNewNet: Int32 = 0x4000_0000
            guard let symbol = dlsym(nil, "setns") else {
                box.set(.failure(Media.MediaError(message: "no setns in libc")))
                return
            }
            let setns = unsafeBitCast(symbol, to: SetNS.self)
            let fd = open(namespace, O_RDONLY | O_CLOEXEC)
            guard fd >= 0, setns(fd, cloneNewNet) == 0 else {
                box.set(.failure(Media.MediaError(message: "setns(\(namespace)): \(String(cString: strerror(errno)))")))
                return
            }
            Glibc.close(fd)
            box.set(Result { try TCP.connect(host: address, port: port, timeout: .seconds(5)) })
        }
        thread.start()
        done.wait()
        let fd = try box.get()
        tls = try TLSConnection.connect(fd: fd, identity: identity, handshakeTimeout: .seconds(5))
        try send(.hello(Hello(name: "test@\(host.rawValue)", software: "LabClient")))
        guard case .welcome? = try next(timeout: 10) else { throw Media.MediaError(message: "no welcome") }
    }

    func send(_ message: Message) throws {
        try tls.write(message.frame().encoded())
    }

    /// Sends the messages in one write: they reach the receiver together (a burst).
    func send(_ messages: [Message]) throws {
        try tls.write(messages.flatMap { $0.frame().encoded() })
    }

    /// The next message, or nil when none came within `timeout` seconds or the receiver closed.
    func next(timeout: Double) throws -> Message? {
        let deadline = Date().addingTimeInterval(timeout)
        while pending.isEmpty {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            let bytes: [UInt8]
            do {
                bytes = try tls.read(maxCount: 256 * 1024, timeout: .milliseconds(Int(left * 1000) + 1))
            } catch let error as SecurityError where error.kind == .timedOut {
                return nil
            }
            if bytes.isEmpty { return nil }
            decoder.feed(bytes)
            while let frame = try decoder.nextFrame() { pending.append(try Message(frame)) }
        }
        return pending.removeFirst()
    }

    func close() { tls.close() }

    /// The connect thread's result.
    private final class ConnectResult: @unchecked Sendable {
        // Invariant: written once by the connect thread before it signals; read after the wait.
        private let lock = NSLock()
        private var result: Result<Int32, any Error> = .failure(Media.MediaError(message: "not connected"))
        func set(_ value: Result<Int32, any Error>) { lock.withLock { result = value } }
        func get() throws -> Int32 { try lock.withLock { result }.get() }
    }
}
