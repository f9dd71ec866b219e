/// What `remove` did, so a command can say exactly that.
public enum TrustStoreRemoval<Entry: Sendable>: Sendable {
    /// This entry was removed and the store saved.
    case removed(Entry)
    /// Nothing matched; the store is unchanged.
    case notFound
    /// The prefix matched several entries (listed); nothing was removed.
    case ambiguous([Entry])
}

extension TrustStoreRemoval: Equatable where Entry: Equatable {}
