// cast move: what plays on one receiver moved to another, by the sender that plays it.
import CastBase
import CastCommandLine
import CastProtocol
import CastSender

/// `cast move NAME --to OTHER`: asks the sender that plays on NAME (castd passes the request on, as `cast join`'s)
/// to start what plays there on OTHER at the position reached and stop it on NAME; waits until OTHER plays and NAME
/// has stopped. Unknown NAME or OTHER: exit 3; nothing playing on NAME: exit 1.
func move(_ arguments: ParsedArguments) throws(CastError) {
    guard arguments.positionals.count == 1, let given = arguments.positionals.first else {
        throw CastError(.usage, "cast move takes one receiver whose playback moves, and --to the receiver it moves to")
    }
    guard let target = arguments.options["to"] else {
        throw CastError(.usage, "cast move needs --to: the receiver the playback moves to")
    }
    guard case .connected(let source) = try reachReceiver(given, arguments) else {
        preconditionFailure("a speaker is reached only when speakers are asked for")
    }
    defer { source.close() }
    let sourceName = printable(source.welcome.name)
    guard try source.status().state != .stopped else { throw CastError(.playback, "nothing plays on \(sourceName)") }
    guard case .connected(let other) = try reachReceiver(target, arguments) else {
        preconditionFailure("a speaker is reached only when speakers are asked for")
    }
    defer { other.close() }
    let otherName = printable(other.welcome.name)
    guard other.welcome.id != source.welcome.id else {
        throw CastError(.usage, "\(sourceName) and \(otherName) are the same receiver")
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

/// How long `cast move` waits for the other receiver to play: the sender reaches it, starts the media and waits
/// for its first frames.
enum Move {
    static let wait = 15
}
