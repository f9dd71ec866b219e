import Foundation

/// The process tree as /proc shows it.
enum Processes {
    /// The pids whose parent is `pid` (every thread's children).
    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    static func arguments(of pid: Int32) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// What `pid` maps (/proc/PID/maps), read to its end: the file says its size is 0, and a plain read of it stops
    /// after the first page.
    static func maps(of pid: Int32) -> String {
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return "" }
        defer { try? handle.close() }
        return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    }

    /// castd itself, below the lab's wrapper processes that started it.
    static func castd(under root: Int32) -> Int32? {
        var queue = [root]
        while !queue.isEmpty {
            let pid = queue.removeFirst()
            let arguments = arguments(of: pid)
            if let first = arguments.first, first.hasSuffix("castd"), !arguments.contains("--session-worker") {
                return pid
            }
            queue += children(of: pid)
        }
        return nil
    }

    /// castd's decoder workers.
    static func workers(of castd: Int32) -> [Int32] {
        children(of: castd).filter { arguments(of: $0).dropFirst().first == "--session-worker" }
    }

    /// castd's workers that play a session: those that set the session's limits (a spare has not yet).
    static func playingWorkers(of castd: Int32) -> [Int32] {
        workers(of: castd).filter { limits(of: $0)["Max address space"] != "unlimited" }
    }

    /// The soft limits of /proc/PID/limits by name ("Max open files" → "64").
    static func limits(of pid: Int32) -> [String: String] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? ""
        var limits: [String: String] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            // Columns: the name (up to 26 characters), then the soft limit, the hard limit and the unit.
            let name = String(line.prefix(26)).trimmingCharacters(in: .whitespaces)
            let values = line.dropFirst(26).split(separator: " ")
            if let soft = values.first { limits[name] = String(soft) }
        }
        return limits
    }

    static func residentKilobytes(_ pid: Int32) -> Int { status(pid, "VmRSS") }

    /// /proc/PID/status by field name, as text ("Seccomp" → "2", "CapEff" → "0000000000000000").
    static func status(of pid: Int32) -> [String: String] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    /// A kilobyte figure of /proc/PID/status by name ("VmRSS", "VmPeak"); 0 when it cannot be read.
    static func status(_ pid: Int32, _ name: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
