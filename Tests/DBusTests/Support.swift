import DBusTesting
import DBusExport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import DBus

/// Fails (instead of hanging) if `body` does not finish within `seconds`. A safety net only.
func withDeadline<T: Sendable>(_ seconds: Int = 30, _ what: String = "operation",
                               _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw DBusError.failed("\(what) did not finish within \(seconds) s")
        }
        group.cancelAll()
        return value
    }
}

/// The next element of a stream, failing after a deadline.
func next<T: Sendable>(_ stream: AsyncStream<T>, _ what: String = "stream element") async throws -> T {
    let box = StreamBox(stream)
    return try await withDeadline(20, what) {
        guard let v = await box.next() else { throw DBusError.failed("\(what): stream ended") }
        return v
    }
}

/// Lets a stream's iterator be used from a child task. Unchecked: the iterator is a `var` the compiler
/// cannot prove exclusive; `next(_:_:)` hands it to one child task at a time.
final class StreamBox<T: Sendable>: @unchecked Sendable {
    var iterator: AsyncStream<T>.Iterator
    init(_ s: AsyncStream<T>) { iterator = s.makeAsyncIterator() }
    func next() async -> T? { await iterator.next() }
}

/// A bus with two connections: a server (exporting objects) and a client.
struct Bus: Sendable {
    let daemon: DBusTestDaemon
    let server: DBusConnection
    let client: DBusConnection

    static func start() async throws -> Bus {
        let daemon = try await DBusTestDaemon.start()
        let server = try await DBusConnection.open(.address(daemon.address))
        let client = try await DBusConnection.open(.address(daemon.address))
        return Bus(daemon: daemon, server: server, client: client)
    }

    func stop() async {
        await client.close()
        await server.close()
        await daemon.stop()
    }
}

/// The number of open file descriptors of this process.
func openFDCount() -> Int {
    guard let dir = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(dir) }
    var n = 0
    while readdir(dir) != nil { n += 1 }
    return n
}

/// Open connections to the Unix socket at `path` (plus its listener), counted system-wide in
/// /proc/net/unix: every connection a client leaks also stays open on the daemon's side. Unlike
/// /proc/self/fd it is not disturbed by other suites opening files in parallel.
func connectionCount(toSocket path: String) -> Int {
    // procfs files report size 0: read to the end (contentsOfFile may stop after one page).
    guard let handle = FileHandle(forReadingAtPath: "/proc/net/unix") else { return -1 }
    defer { try? handle.close() }
    let table = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    return table.split(separator: "\n").filter { $0.hasSuffix(" " + path) }.count
}

let testInterface = "org.roombridge.Test"
let testPath: DBusObjectPath = "/org/roombridge/test"

/// An interface with `Echo` (returns its arguments, any signature), `Fail` (throws the
/// error named by its two string arguments) and `Sleep` (waits the given milliseconds; counts
/// in `sleeping` the calls that reached it: the proof that a call left the caller).
func echoInterface(sleeping: SharedValue<Int>? = nil) -> DBusInterface {
    DBusInterface(testInterface, methods: [
        DBusMethod("Echo", checksArguments: false) { call in call.arguments },
        DBusMethod("Fail", in: [DBusArgument("name", "s"), DBusArgument("message", "s")]) { call in
            throw DBusError(name: try call.arguments[0].string(), message: try call.arguments[1].string())
        },
        DBusMethod("Sleep", in: [DBusArgument("ms", "u")]) { call in
            sleeping?.withLock { $0 += 1 }
            try await Task.sleep(for: .milliseconds(Int(try call.arguments[0].integer())))
            return []
        },
    ])
}

/// A value a test shares with the handlers it exports: a reference to one `Mutex`.
final class SharedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}
