internal import COpenSSL
import CastSystem
import Glibc

/// A BIO that carries TLS records over a socket with `send(MSG_NOSIGNAL)` and `recv`.
///
/// OpenSSL's own socket BIO uses write(2), which raises SIGPIPE (killing the process by default) when the
/// peer has gone. Sending with `MSG_NOSIGNAL` turns that into an `EPIPE` error instead, so callers need
/// not ignore SIGPIPE process-wide. The socket is expected to be non-blocking; `EAGAIN` becomes a retry.
enum SocketBIO {
    /// Creates a BIO over `fd`. The BIO does not own the descriptor: closing it is `TLSConnection`'s job.
    static func make(fd: Int32) throws -> OpaquePointer {
        guard let bio = BIO_new(SocketBIOMethod.shared.method) else {
            throw SecurityError.openSSL("BIO_new", "cannot create the socket BIO")
        }
        // Store fd + 1 so that descriptor 0 is not mistaken for "no data".
        BIO_set_data(bio, UnsafeMutableRawPointer(bitPattern: Int(fd) + 1))
        BIO_set_init(bio, 1)
        return bio
    }

    fileprivate static func descriptor(_ bio: OpaquePointer?) -> Int32 {
        Int32(truncatingIfNeeded: Int(bitPattern: BIO_get_data(bio)) - 1)
    }
}

/// The BIO_METHOD table, created once.
///
/// `@unchecked Sendable`: the table is filled in `init` and never modified again; OpenSSL only reads it.
private final class SocketBIOMethod: @unchecked Sendable {
    static let shared = SocketBIOMethod()

    let method: OpaquePointer

    private init() {
        guard let method = BIO_meth_new(BIO_get_new_index() | cast_bio_type_source_sink(), "cast socket") else {
            preconditionFailure("BIO_meth_new failed: \(drainOpenSSLErrors())")
        }
        BIO_meth_set_write_ex(method) { bio, data, length, written in
            cast_BIO_clear_retry_flags(bio)
            while true {
                let count = send(SocketBIO.descriptor(bio), data, length, Int32(MSG_NOSIGNAL))
                if count >= 0 {
                    written?.pointee = count
                    return 1
                }
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { cast_BIO_set_retry_write(bio) }
                return 0
            }
        }
        BIO_meth_set_read_ex(method) { bio, data, length, readBytes in
            cast_BIO_clear_retry_flags(bio)
            while true {
                let count = recv(SocketBIO.descriptor(bio), data, length, 0)
                if count > 0 {
                    readBytes?.pointee = count
                    return 1
                }
                if count == 0 {
                    // End of stream: BIO_eof (asked through ctrl below) must now report it.
                    BIO_set_flags(bio, cast_bio_flags_in_eof())
                    return 0
                }
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { cast_BIO_set_retry_read(bio) }
                return 0
            }
        }
        BIO_meth_set_ctrl(method) { bio, command, _, _ in
            switch command {
            case cast_bio_ctrl_flush(): return 1  // nothing is buffered here
            case cast_bio_ctrl_eof(): return BIO_test_flags(bio, cast_bio_flags_in_eof()) != 0 ? 1 : 0
            default: return 0
            }
        }
        self.method = method
    }
}
