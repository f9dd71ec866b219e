public import CastProtocol

/// What castd tells an AirPlay client on its reverse connection (`POST /reverse`, "PTTH/1.0"): the video session's
/// state as it changes, in the `POST /event` requests an Apple TV sends, so that a client shows playing, paused and
/// the end without polling `/playback-info`.
///
/// The request (docs/protocol.md, "AirPlay: events"): `POST /event HTTP/1.1` with `Content-Type:
/// text/x-apple-plist+xml`, `X-Apple-Session-ID` (the session's), and an XML property list `{category: "video",
/// state: "loading" | "playing" | "paused" | "stopped"}`, with `reason` (`ended`, `stopped`, `error`) when stopped.
/// A picture's session (`PUT /photo`) says `category: "photo"`: `playing` once it is on screen, `stopped` when it is
/// taken down.
public struct AirPlayEvent: Sendable, Equatable {
    /// What kind of session the event is about.
    public enum Category: String, Sendable, Equatable {
        /// A video (`/play`).
        case video
        /// A picture (`/photo`).
        case photo
    }

    /// The session's state, in the words an Apple TV uses.
    public enum State: String, Sendable, Equatable {
        case loading
        case playing
        case paused
        case stopped
    }

    public var state: State
    /// Why a session stopped: `ended` (the media's end), `stopped` (by a control), `error`; nil for the other states.
    public var reason: String?
    /// A video's or a picture's.
    public var category: Category

    public init(state: State, reason: String? = nil, category: Category = .video) {
        self.state = state
        self.reason = reason
        self.category = category
    }

    /// The event a playback event makes for the client, nil for those it is not told (positions, sizes, logs...).
    /// A stalled input, a seek and the wait before the first frame are `loading`, as an Apple TV reports them.
    public init?(_ event: PlaybackEvent, category: Category = .video) {
        switch event {
        case .playbackState(let state):
            switch state {
            case .playing: self.init(state: .playing, category: category)
            case .paused: self.init(state: .paused, category: category)
            case .interrupted, .seekingForward, .seekingBackward: self.init(state: .loading, category: category)
            case .stopped: return nil
            }
        case .finished(let reason, _, _):
            let why =
                switch reason {
                case .playbackEnded: "ended"
                case .playbackError: "error"
                case .userExited: "stopped"
                }
            self.init(state: .stopped, reason: why, category: category)
        default:
            return nil
        }
    }

    /// The `POST /event` request for session `sessionID` (a checked `X-Apple-Session-ID`: printable ASCII).
    public func request(sessionID: String) -> [UInt8] {
        precondition(sessionID.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "a session ID with a blank or a control")
        var entries = "<key>category</key><string>\(category.rawValue)</string>"
        if let reason { entries += "<key>reason</key><string>\(reason)</string>" }
        entries += "<key>state</key><string>\(state.rawValue)</string>"
        let body = Array(
            ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
                + "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
                + "<plist version=\"1.0\"><dict>\(entries)</dict></plist>\n").utf8)
        let head =
            "POST /event HTTP/1.1\r\nContent-Type: text/x-apple-plist+xml\r\nContent-Length: \(body.count)\r\n"
            + "X-Apple-Session-ID: \(sessionID)\r\n\r\n"
        return Array(head.utf8) + body
    }
}

/// Reads the client's answers to castd's `POST /event` requests on a reverse connection, one at a time: a status line
/// `HTTP/1.x NNN …`, header fields, and a body of `Content-Length` bytes (none without it), each bounded. Pure: fed
/// the bytes as they arrive.
public struct AirPlayEventAnswerReader: Sendable {
    /// The most bytes of an answer's head (status line and header fields).
    public static let maximumHeadLength = 16 * 1024
    /// The most bytes of an answer's body (an Apple client sends none).
    public static let maximumBodyLength = 64 * 1024

    /// The start of a head that has not ended yet (at most `maximumHeadLength` + 3 bytes).
    private var pending: [UInt8] = []
    /// The answer being read: its status, and the body bytes still to skip.
    private var current: (status: Int, bodyLeft: Int)?

    public init() {}

    /// The bytes held for a head not ended yet.
    public var bufferedByteCount: Int { pending.count }

    /// Takes `bytes` and returns the status codes of the answers they completed, in order. Each byte is looked at
    /// about once: a body is skipped where it lies, and a head's end is looked for only in what arrived since.
    /// - Throws: ``HTTPRequestError`` when the bytes are not an HTTP/1.x answer, or one over the limits.
    public mutating func feed(_ bytes: [UInt8]) throws(HTTPRequestError) -> [Int] {
        var completed: [Int] = []
        var searchFrom = max(0, pending.count - 3)
        var input = pending.isEmpty ? bytes[...] : (pending + bytes)[...]
        pending = []
        while true {
            if var answer = current {
                let skipped = min(answer.bodyLeft, input.count)
                input = input.dropFirst(skipped)
                answer.bodyLeft -= skipped
                guard answer.bodyLeft == 0 else {
                    current = answer
                    return completed
                }
                completed.append(answer.status)
                current = nil
                searchFrom = 0
            }
            if input.isEmpty { return completed }
            guard let end = Self.headEnd(in: input, from: input.startIndex + searchFrom) else {
                guard input.count <= Self.maximumHeadLength + 3 else {
                    throw HTTPRequestError(.headerFieldsTooLarge, "an event answer's head is over 16 KiB")
                }
                pending = Array(input)
                return completed
            }
            guard end - input.startIndex <= Self.maximumHeadLength else {
                throw HTTPRequestError(.headerFieldsTooLarge, "an event answer's head is over 16 KiB")
            }
            current = try Self.parseHead(input[input.startIndex..<end])
            input = input[(end + 4)...]
            searchFrom = 0
        }
    }

    /// Where the head ends in `bytes` (the index of its CR LF CR LF), looking from `start`; nil while it has not
    /// arrived.
    private static func headEnd(in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard bytes.count >= 4, start <= bytes.endIndex - 4 else { return nil }
        for index in start...(bytes.endIndex - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    private static func parseHead(_ head: ArraySlice<UInt8>) throws(HTTPRequestError) -> (status: Int, bodyLeft: Int) {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.first.map { $0.split(separator: " ", maxSplits: 2) } ?? []
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1" || statusLine[0] == "HTTP/1.0",
            statusLine[1].count == 3, let status = Int(statusLine[1]), (100...599).contains(status)
        else { throw HTTPRequestError(.badRequest, "an event answer without an HTTP/1.x status line") }
        var length = 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else {
                throw HTTPRequestError(.badRequest, "an event answer's header line without a colon")
            }
            guard line[..<colon].lowercased() == "content-length" else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            guard let parsed = Int(value), parsed >= 0, parsed <= maximumBodyLength else {
                throw HTTPRequestError(.contentTooLarge, "an event answer's Content-Length is bad or over 64 KiB")
            }
            length = parsed
        }
        return (status, length)
    }
}

extension Substring {
    /// The text without `blanks` at either end.
    fileprivate func trimmingCharacters(in blanks: String) -> String {
        var text = self
        while let first = text.first, blanks.contains(first) { text.removeFirst() }
        while let last = text.last, blanks.contains(last) { text.removeLast() }
        return String(text)
    }
}
