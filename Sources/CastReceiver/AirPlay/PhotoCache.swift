/// The pictures AirPlay clients keep on castd ahead of showing them (`PUT /photo` with `X-Apple-AssetAction:
/// cacheOnly`; an iPhone sends the pictures beside the one shown, so that a swipe shows the next at once), found again
/// by their key (`displayCached`). Bounded per client (its address: one phone may use several connections) and in all:
/// when a bound would be passed, the oldest pictures go first (the client's own, then anyone's). A value with no I/O.
///
/// Thread-safety: a value; `AirPlayVideoService` keeps it under its lock.
struct PhotoCache {
    /// The bounds.
    struct Limits: Equatable {
        /// Pictures kept for one client.
        var picturesPerClient = 8
        /// Bytes kept for one client.
        var bytesPerClient = 64 << 20
        /// Bytes kept for all clients together.
        var bytes = 128 << 20
    }

    private struct Entry {
        let client: String
        let key: String
        let picture: [UInt8]
    }

    let limits: Limits
    /// Oldest first.
    private var entries: [Entry] = []

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The bytes kept, in all.
    var byteCount: Int { entries.reduce(0) { $0 + $1.picture.count } }

    /// How many pictures are kept for `client`.
    func count(for client: String) -> Int { entries.filter { $0.client == client }.count }

    /// Keeps `picture` for `client` under `key` (replacing what that key held), as the newest; older pictures go as the
    /// bounds require. A picture over a bound by itself is not kept.
    mutating func store(_ picture: [UInt8], key: String, client: String) {
        entries.removeAll { $0.client == client && $0.key == key }
        guard picture.count <= min(limits.bytesPerClient, limits.bytes), limits.picturesPerClient > 0 else { return }
        func clientBytes() -> Int { entries.lazy.filter { $0.client == client }.reduce(0) { $0 + $1.picture.count } }
        while count(for: client) >= limits.picturesPerClient || clientBytes() + picture.count > limits.bytesPerClient,
            let oldest = entries.firstIndex(where: { $0.client == client })
        {
            entries.remove(at: oldest)
        }
        while byteCount + picture.count > limits.bytes, !entries.isEmpty { entries.removeFirst() }
        entries.append(Entry(client: client, key: key, picture: picture))
    }

    /// The picture `client` keeps under `key`, if it is still kept.
    func picture(key: String, client: String) -> [UInt8]? {
        entries.last { $0.client == client && $0.key == key }?.picture
    }

    /// Drops every picture of `client` (its last connection closed).
    mutating func forget(client: String) {
        entries.removeAll { $0.client == client }
    }
}
