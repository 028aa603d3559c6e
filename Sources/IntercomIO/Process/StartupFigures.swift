import Glibc

/// How long this process took to get where it is since it was started, and how much of that
/// was its own work: a service that must be ready within a tenth of a second on a Pi is
/// judged by its CPU time and by its wall time less what it spent waiting for a CPU, which a
/// busy machine stretches without the program doing anything more.
public struct StartupFigures: Sendable, Equatable {
    /// Since the kernel started the process (its start time has the kernel's tick, 10 ms).
    public var sinceStart: Duration
    /// CPU time of all its threads.
    public var processor: Duration
    /// Time its live threads spent runnable but waiting for a CPU (`/proc/self/task/*/schedstat`).
    public var waitingForProcessor: Duration

    /// The process's wall time less its waiting for a CPU: what an idle machine would have taken.
    public var ownTime: Duration { max(.zero, sinceStart - waitingForProcessor) }

    /// This process's figures now, or nil where /proc does not say.
    public static func now() -> StartupFigures? {
        let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
        guard let started = startTicks(), ticksPerSecond > 0 else { return nil }
        var boot = timespec()
        var cpu = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &boot) == 0, clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0 else { return nil }
        let startNanoseconds = Int64(started) * 1_000_000_000 / Int64(ticksPerSecond)
        let bootNanoseconds = Int64(boot.tv_sec) * 1_000_000_000 + Int64(boot.tv_nsec)
        return StartupFigures(
            sinceStart: .nanoseconds(max(0, bootNanoseconds - startNanoseconds)),
            processor: .nanoseconds(Int64(cpu.tv_sec) * 1_000_000_000 + Int64(cpu.tv_nsec)),
            waitingForProcessor: .nanoseconds(waitedNanoseconds())
        )
    }

    /// Field 22 of /proc/self/stat: the start time in clock ticks since boot. The command
    /// name (field 2) is in parentheses and may hold spaces: fields are counted after its ")".
    private static func startTicks() -> UInt64? {
        guard let text = readSmallFile("/proc/self/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After ")": field 3 (state) is fields[0], so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// The second figure of each thread's schedstat: nanoseconds spent on a run queue.
    private static func waitedNanoseconds() -> Int64 {
        guard let directory = opendir("/proc/self/task") else { return 0 }
        defer { closedir(directory) }
        var total: Int64 = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.first?.isNumber == true, let text = readSmallFile("/proc/self/task/\(name)/schedstat") else { continue }
            let figures = text.split(separator: " ")
            if figures.count >= 2, let waited = Int64(figures[1].filter(\.isNumber)) {
                total += waited
            }
        }
        return total
    }

    private static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
