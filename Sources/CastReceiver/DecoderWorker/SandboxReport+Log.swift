extension SandboxReport {
    /// What castd's log says of a decoder worker's sandbox, once at start (docs/security.md, "Decoder isolation"):
    /// each part in force at `info`, each part missing at `warning` with its reason.
    var logLines: [(Logger.Level, String)] {
        var lines: [(Logger.Level, String)] = []
        if let mountProblem {
            lines.append(
                (
                    .warning,
                    "decoder sandbox: no private mount namespace (\(mountProblem)): a compromised decoder could read "
                        + "the state directory"
                ))
        } else {
            lines.append(
                (.info, "decoder sandbox: the state directory is hidden from decoder workers (private mount namespace)")
            )
        }
        if let networkProblem {
            lines.append(
                (
                    .warning,
                    "decoder sandbox: no private network (\(networkProblem)): AirPlay clients' URLs are refused, and a "
                        + "compromised decoder could connect wherever castd can"
                ))
        } else {
            lines.append(
                (
                    .info,
                    "decoder sandbox: decoder workers have no network but their own loopback (URLs through castd's proxy)"
                ))
        }
        if let displayProblem {
            lines.append(
                (.warning, "decoder sandbox: workers without a window share castd's System V IPC (\(displayProblem))"))
        }
        if let filterProblem {
            lines.append((.warning, "decoder sandbox: no system call filter (\(filterProblem))"))
        } else {
            lines.append((.info, "decoder sandbox: system call filter on (seccomp)"))
        }
        return lines
    }
}
