import CastSecurity
import FoundationEssentials
// Unicode canonical decomposition (NFD), which the standard library has and exports only to Foundation's own
// string code (`_nfd`); FoundationEssentials does not re-export it, and all of Foundation (with ICU) would come with
// NSString's `decomposedStringWithCanonicalMapping`.
@_spi(_Unicode) import Swift

/// Which paired receiver a connection must reach, judged only from what the user asked for and how the receiver
/// was found, never from what the receiver says about itself once connected.
///
/// Each of these is a *lead* when it names a paired receiver:
/// - the user's words (`ReceiverDescription.requested`): a paired receiver's id, or its name (folded: case,
///   accents, spacing and invisible characters do not count); when none is named exactly, every paired receiver
///   whose name or id the words begin;
/// - the advertisement the receiver was found by: the TXT `id`, the instance name and the `fn` name;
/// - for a receiver not found by discovery (`--to HOST:PORT`, or a program's own description), the address: the
///   paired receiver last reached there.
///
/// With no lead, no pairing applies and the receiver's own `auth` decides. With leads, the key presented must be
/// that of a paired receiver every lead names: "Living Room 2", "Living Room " or anything at a paired receiver's
/// address is refused while the user asked for a paired "Living Room".
///
/// A value in, value out rule (no I/O), so that it is tested without sockets.
struct ReceiverPin: Sendable, Equatable {
    /// One lead: what named the paired receivers, and which they are.
    struct Lead: Sendable, Equatable {
        /// What the lead was, for the warning: `the name "Living Room"`, `the address 10.0.0.5:7100`.
        let what: String
        /// The paired receivers it names (at least one).
        let receivers: [KnownReceiver]
    }

    /// Every lead; empty when nothing names a paired receiver.
    let leads: [Lead]

    /// The leads for connecting to `receiver`, among the `paired` receivers.
    init(_ receiver: ReceiverDescription, paired: [KnownReceiver]) {
        var leads: [Lead] = []
        func add(_ what: String, _ named: [KnownReceiver]) {
            if !named.isEmpty { leads.append(Lead(what: what, receivers: named)) }
        }
        if let words = receiver.requested, case .name = ReceiverQuery(words) {
            let wanted = Self.folded(words)
            let exact = paired.filter { $0.id == words.lowercased() || Self.sameName($0.name, words) }
            let prefixed =
                wanted.isEmpty
                ? []
                : paired.filter { Self.folded($0.name).hasPrefix(wanted) || $0.id.hasPrefix(words.lowercased()) }
            add("\"\(words)\"", exact.isEmpty ? prefixed : exact)
        }
        if receiver.record != nil || !receiver.id.isEmpty {
            let advertisedID = receiver.id.lowercased()
            add("the advertised id \(receiver.id)", paired.filter { !advertisedID.isEmpty && $0.id == advertisedID })
            add("the advertised name \"\(receiver.name)\"", paired.filter { Self.sameName($0.name, receiver.name) })
            if let friendlyName = receiver.record?.friendlyName {
                add("the advertised name \"\(friendlyName)\"", paired.filter { Self.sameName($0.name, friendlyName) })
            }
        } else {
            add("the name \"\(receiver.name)\"", paired.filter { Self.sameName($0.name, receiver.name) })
            add("the address \(receiver.address)", paired.filter { $0.address == receiver.address })
        }
        self.leads = leads
    }

    /// Whether a receiver presenting the key with this id may be talked to.
    func admits(_ peerID: String) -> Bool {
        leads.allSatisfy { lead in lead.receivers.contains { $0.id == peerID.lowercased() } }
    }

    /// The first lead the key does not satisfy (what the warning names), if any.
    func refusal(of peerID: String) -> Lead? {
        leads.first { lead in !lead.receivers.contains { $0.id == peerID.lowercased() } }
    }

    /// Whether two names are the same once folded; an empty name is nobody's.
    static func sameName(_ one: String, _ other: String) -> Bool {
        let folded = Self.folded(one)
        return !folded.isEmpty && folded == Self.folded(other)
    }

    /// A name as it is compared: lowercase, accents, control and invisible (format) characters dropped, and runs of
    /// white space made one space, trimmed. So "Living Room ", "living  room" and "Living\u{200B} Röom" are all
    /// "living room".
    static func folded(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in String(String.UnicodeScalarView(name._nfd)).lowercased().unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control where !scalar.properties.isWhitespace, .format, .nonspacingMark, .enclosingMark:
                continue
            default:
                if scalar.properties.isWhitespace {
                    pendingSpace = !scalars.isEmpty
                    continue
                }
                if pendingSpace { scalars.append(" ") }
                pendingSpace = false
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }
}
