import CastSecurity
import CastSystem

/// A sender's settings (`cast config`): the default receiver and aliases, kept in
/// `<configDirectory>/settings.json` beside the sender's identity and paired receivers.
///
/// A receiver argument is looked up as an alias first (case-insensitive); a missing one means the default
/// receiver, and with no default, `ReceiverBrowser.resolve(nil)` takes the only receiver in sight.
///
/// Thread-safety: `Sendable`; the file is re-read when another process changed it and written atomically
/// under a lock, so concurrent `cast config` runs never lose a change.
public struct CastSettings: Sendable {
    private let store: SenderSettings

    /// Loads the settings; a missing file means none are set.
    /// - Throws: `CastError` `.usage` when the file is corrupt, too large or readable by others (it is
    ///   left alone; the message names it).
    public static func load(configDirectory: String) throws(CastError) -> CastSettings {
        do {
            return CastSettings(store: try SenderSettings.load(directory: configDirectory))
        } catch {
            throw CastError(.usage, "cannot use the settings: \(error)")
        }
    }

    private init(store: SenderSettings) { self.store = store }

    /// The settings file.
    public var path: String { store.path }

    /// What a receiver argument means: an alias's target, the argument itself, or (when nil) the default.
    public func resolve(_ query: String?) throws(CastError) -> String? {
        try wrap { () throws(SecurityError) in try store.resolve(query) }
    }

    /// The receiver used when a verb is given none.
    public func defaultReceiver() throws(CastError) -> String? {
        try wrap { () throws(SecurityError) in try store.defaultReceiver() }
    }

    /// Every alias: lowercase name → receiver.
    public func aliases() throws(CastError) -> [String: String] {
        try wrap { () throws(SecurityError) in try store.aliases() }
    }

    /// Sets, or with nil clears, the default receiver.
    public func setDefaultReceiver(_ query: String?) throws(CastError) {
        try wrap { () throws(SecurityError) in try store.setDefaultReceiver(query) }
    }

    /// Makes `alias` stand for `receiver`.
    public func setAlias(_ alias: String, to receiver: String) throws(CastError) {
        try wrap { () throws(SecurityError) in try store.setAlias(alias, to: receiver) }
    }

    /// Removes an alias; false when there was none.
    @discardableResult
    public func removeAlias(_ alias: String) throws(CastError) -> Bool {
        try wrap { () throws(SecurityError) in try store.removeAlias(alias) }
    }

    private func wrap<T>(_ body: () throws(SecurityError) -> T) throws(CastError) -> T {
        do {
            return try body()
        } catch {
            throw CastError(.usage, "\(error)")
        }
    }
}
