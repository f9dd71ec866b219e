internal import COpenSSL
import CastProtocol
import CastSystem
import FoundationEssentials
import Glibc

/// The on-disk form of an identity key: `<directory>/identity.pem`, PKCS#8 PEM, mode 0600.
struct KeyFile {
    let directory: String
    var path: String { directory + "/" + Identity.fileName }

    /// Loads the key, creating the directory and a new key when there is no file yet.
    func loadOrCreate() throws -> PrivateKey {
        if let key = try loadIfPresent() { return key }
        try PrivateDirectory.create(directory)
        let key = try PrivateKey.generateEd25519()
        if try install(pem: try pemText(of: key)) { return key }
        // Another process installed its key first; use that one so both agree.
        guard let key = try loadIfPresent() else {
            throw SecurityError(.keyFile, "identity key file \(path) vanished while being created")
        }
        return key
    }

    /// Reads and parses the key file, refusing one that group or others can access. `nil` if it does not exist.
    ///
    /// The directory is checked first (`PrivateDirectory`). The file is opened without following a symbolic link
    /// and without waiting (a FIFO in its place would otherwise block the open until someone writes to it), and
    /// must be a regular file owned by this user or root.
    func loadIfPresent() throws -> PrivateKey? {
        try PrivateDirectory.check(directory, kind: .keyFile)
        guard let (pem, _) = try WholeFile.readPrivate(path, what: "identity key file", kind: .keyFile, limit: 1 << 20)
        else { return nil }
        if let key = Self.ed25519Key(pem: pem) { return key }
        let bio = try MemoryBIO(copying: pem)
        guard let key = PEM_read_bio_PrivateKey(bio.pointer, nil, nil, nil) else {
            let details = drainOpenSSLErrors()
            throw SecurityError(
                .keyFile, function: "PEM_read_bio_PrivateKey",
                "identity key file \(path) is not a PEM private key" + (details.isEmpty ? "" : ": \(details)"))
        }
        let privateKey = PrivateKey(owning: key)
        guard EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 else {
            throw SecurityError(.keyFile, "identity key file \(path) holds a key that is not Ed25519")
        }
        return privateKey
    }

    /// The PKCS#8 DER of an Ed25519 private key up to its 32-byte seed (RFC 8410: version 0, id-Ed25519, the
    /// seed as an OCTET STRING in an OCTET STRING): what `PEM_write_bio_PrivateKey` writes for one.
    static let ed25519PKCS8Prefix: [UInt8] = [
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
    ]

    /// The key of an identity file in the form this program writes (`-----BEGIN PRIVATE KEY-----`, the 48 bytes of
    /// an Ed25519 PKCS#8 key), made from its seed directly; nil for anything else, which OpenSSL's PEM reader then
    /// reads (or refuses). OpenSSL 3's PEM reader tries every decoder of every provider: a sixth of `cast status`'s
    /// instructions went there (docs/performance.md).
    static func ed25519Key(pem: [UInt8]) -> PrivateKey? {
        guard pem.count < 512, let text = String(validating: pem, as: UTF8.self) else { return nil }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmed() }
        guard lines.count >= 3, lines.first == "-----BEGIN PRIVATE KEY-----", lines.last == "-----END PRIVATE KEY-----",
            let der = Data(base64Encoded: lines.dropFirst().dropLast().joined()).map(Array.init),
            der.count == ed25519PKCS8Prefix.count + 32, der.starts(with: ed25519PKCS8Prefix)
        else { return nil }
        let seed = Array(der[ed25519PKCS8Prefix.count...])
        guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, seed.count) else {
            _ = drainOpenSSLErrors()
            return nil
        }
        return PrivateKey(owning: key)
    }

    /// Writes `pem` to a temporary file (0600, fsynced), then links it to `path`. Returns `false` if `path`
    /// already exists (another process won the race). Falls back to rename(2) where hard links are unsupported.
    private func install(pem: [UInt8]) throws -> Bool {
        let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = try systemCall("open") { Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
        var installed = false
        defer { if !installed { unlink(temporary) } }
        do {
            defer { closeDescriptor(fd) }
            try systemCall("fchmod") { fchmod(fd, 0o600) }
            try WholeFile.write(fd, pem)
            try systemCall("fsync") { fsync(fd) }
        }
        if Glibc.link(temporary, path) == 0 {
            unlink(temporary)
        } else {
            let code = errno
            if code == EEXIST { return false }
            guard code == EPERM || code == EOPNOTSUPP || code == EXDEV else {
                throw SecurityError(.system, function: "link", errno: code, "cannot install identity key file \(path)")
            }
            try systemCall("rename") { rename(temporary, path) }
        }
        installed = true
        syncDirectory()
        return true
    }

    /// Makes the new directory entry durable; best effort, as not every file system supports it.
    private func syncDirectory() {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            closeDescriptor(fd)
        }
    }

    private func pemText(of key: PrivateKey) throws -> [UInt8] {
        let bio = try MemoryBIO()
        try requireOne(
            PEM_write_bio_PrivateKey(bio.pointer, key.pointer, nil, nil, 0, nil, nil), "PEM_write_bio_PrivateKey",
            "cannot encode the identity key")
        return bio.contents
    }

}
