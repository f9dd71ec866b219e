extension Duration {
    /// Seconds as a Double (for Dispatch).
    var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
