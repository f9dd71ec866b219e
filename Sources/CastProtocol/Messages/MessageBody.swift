/// A message's JSON body with rules beyond its types. Each message keeps its checks in its own file, beside its
/// fields (as Snapcast keeps each message's coding with the message); `Message.init(_:)` decodes, then asks.
protocol MessageBody: Decodable {
    /// Throws `.malformedMessage` naming the first field that breaks the message's rules.
    func check() throws(ProtocolError)
}

/// Throws `.malformedMessage` when `text` is longer than `maximumTextLength` bytes.
func checkText(_ text: String?, field: String) throws(ProtocolError) {
    guard let text, text.utf8.count > maximumTextLength else { return }
    throw ProtocolError(.malformedMessage, "\(field) is longer than \(maximumTextLength) bytes")
}

/// Throws `.malformedMessage` "`name` `problem`" when there is a problem.
func reportProblem(_ problem: String?, in name: String) throws(ProtocolError) {
    if let problem { throw ProtocolError(.malformedMessage, "\(name) \(problem)") }
}
