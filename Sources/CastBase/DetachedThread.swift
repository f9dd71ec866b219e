#if canImport(Glibc)
    import Glibc
#endif

/// Starts `body` on a new detached POSIX thread called `name` (the kernel keeps its first 15 bytes, which `top -H`
/// and a debugger show), with a stack of `stackSize` bytes (default: the process's stack limit, 8 MiB).
///
/// What Foundation's `Thread { }.start()` did, without Foundation: `Thread` is NSThread, and using it links all of
/// Foundation (CoreFoundation, NSString, ICU's tables) into a program. `cast` and the libraries it is made of use
/// FoundationEssentials only, which is what keeps its start-up short (docs/performance.md). A thread that cannot be
/// started (the process is out of threads or memory) stops the program with the reason, as `Thread` would have
/// done no better: every caller starts a thread the work cannot go on without.
public func startDetachedThread(name: String, stackSize: Int? = nil, _ body: sending @escaping () -> Void) {
    let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
    var thread = pthread_t()
    let result = pthread_create(
        &thread, &attributes,
        { raw in
            let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
            _ = setThreadName?(pthread_self(), String(decoding: start.name.utf8.prefix(15), as: UTF8.self))
            start.body()
            return nil
        }, start)
    guard result == 0 else {
        Unmanaged<ThreadStart>.fromOpaque(start).release()
        fatalError("cannot start the thread '\(name)': \(String(cString: strerror(result)))")
    }
}

/// glibc's `pthread_setname_np`, which Swift's Glibc module does not declare (it is a GNU extension, behind
/// `_GNU_SOURCE`): looked up once.
private let setThreadName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
    guard let symbol = dlsym(nil, "pthread_setname_np") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
}()

/// What a new thread runs, handed to it through `pthread_create`'s argument. Not `Sendable`: `body` was sent to the
/// new thread (`sending`), which is the only one to touch it.
private final class ThreadStart {
    let name: String
    let body: () -> Void

    init(name: String, body: sending @escaping () -> Void) {
        self.name = name
        self.body = body
    }
}
