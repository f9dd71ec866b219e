// cast move: what plays on one receiver moved to another, by the sender that plays it.
import CastBase
import CastCommandLine
import CastProtocol
import CastSender

/// `cast move NAME --to OTHER`: asks the sender that plays on NAME (castd passes the request on, as `cast join`'s)
/// to start what plays there on OTHER at the position reached and stop it on NAME; waits until OTHER plays and NAME
/// has stopped. A receiver of a group moves in step: OTHER joins the group, then NAME leaves it (`--keep`: it stays).
/// A receiver alone with `--keep` becomes a group of two with OTHER (both start again where NAME was, in step).
/// Unknown NAME or OTHER: exit 3; nothing playing on NAME: exit 1.
func move(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1, let given = arguments.positionals.first else {
        throw CastError(.usage, "cast move takes one receiver whose playback moves, and --to the receiver it moves to")
    }
    guard let target = arguments.options["to"] else {
        throw CastError(.usage, "cast move needs --to: the receiver the playback moves to")
    }
    let source = try reachCastReceiver(given, arguments)
    defer { source.close() }
    let sourceName = printable(source.welcome.name)
    guard try source.status().state != .stopped else { throw CastError(.playback, "nothing plays on \(sourceName)") }
    let other = try reachCastReceiver(target, arguments)
    defer { other.close() }
    let otherName = printable(other.welcome.name)
    guard other.welcome.id != source.welcome.id else {
        throw CastError(.usage, "\(sourceName) and \(otherName) are the same receiver")
    }
    let before = try source.status()
    let keep = arguments.has("keep")
    // In a group, or alone with --keep (the sender that plays makes a group of the two).
    if before.group != nil || keep {
        return try moveInGroup(from: source, to: other, keep: keep, arguments)
    }
    // The sender knows receivers by name or id: the id is exact.
    try source.send(.control(PlaybackControl(.move(receiver: other.welcome.id))))
    let after = try awaitStatus(other, for: Double(Move.wait)) { $0.state == .playing }
    guard after.state == .playing else {
        throw CastError(
            .playback,
            "\(otherName) did not start within \(Move.wait) s (the cast send that plays on \(sourceName) says why)")
    }
    let left = try awaitStatus(source, for: Double(Move.wait)) { $0.state == .stopped }
    guard left.state == .stopped else { throw CastError(.playback, "\(sourceName) still plays") }
    report(
        after, of: other, arguments, text: "\(otherName) plays what \(sourceName) played, from \(clock(after.position))"
    )
}

/// A move out of a group: OTHER joins it in step (as `cast join OTHER --to NAME`), and once it plays NAME is stopped,
/// which takes it out of the group (the others play on), unless `keep`. The gap is none: OTHER plays before NAME
/// stops. NAME alone (only with `keep`): the join makes a group of the two.
private func moveInGroup(
    from source: ReceiverConnection, to other: ReceiverConnection, keep: Bool, _ arguments: ParsedArguments
) throws(CastError) {
    let (sourceName, otherName) = (printable(source.welcome.name), printable(other.welcome.name))
    func named(_ one: String, _ another: String) -> Bool { one.matchesIgnoringCase(another) }
    let before = try other.status()
    let inGroup = before.state != .stopped && before.group?.contains { named($0, sourceName) } == true
    if !inGroup {
        try source.send(.control(PlaybackControl(.join(receiver: other.welcome.id))))
        let joined = try awaitStatus(other, for: Double(GroupJoin.wait)) { status in
            status.state == .playing && status.group?.contains { named($0, sourceName) } == true
        }
        guard joined.state == .playing, joined.group != nil else {
            throw CastError(
                .playback, "\(otherName) did not join within \(GroupJoin.wait) s (the cast send of the group says why)")
        }
    }
    if !keep {
        // A member told to start at an instant reports `playing` at once, its position standing until the instant; the
        // group aligns it only once it plays (its `sync`): NAME stops then, so that there is no gap.
        let synced = try awaitStatus(other, for: Double(Move.wait)) { $0.state == .playing && $0.sync != nil }
        guard synced.sync != nil else {
            throw CastError(.playback, "\(otherName) did not play in step within \(Move.wait) s")
        }
        try source.send(.control(PlaybackControl(.stop)))
        let left = try awaitStatus(source, for: Double(Move.wait)) { $0.state == .stopped }
        guard left.state == .stopped else { throw CastError(.playback, "\(sourceName) still plays") }
    }
    let after = try other.status()
    report(
        after, of: other, arguments,
        text: keep ? "\(otherName) plays in the group of \(sourceName)" : "\(otherName) plays what \(sourceName) played"
    )
}

/// How long `cast move` waits for the other receiver to play: the sender reaches it, starts the media and waits
/// for its first frames.
enum Move {
    static let wait = 15
}
