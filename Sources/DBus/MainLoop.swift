internal import CDBus
import Dispatch

// libdbus main-loop integration: every watch becomes a DispatchSource on the connection's serial
// queue, every timeout a DispatchSourceTimer there, and the dispatch-status callback schedules
// dbus_connection_dispatch() on the queue. All libdbus calls for a connection happen on that
// queue, so the callbacks below are also invoked on it.

private let watchReadable: UInt32 = 1  // DBUS_WATCH_READABLE
private let watchWritable: UInt32 = 2  // DBUS_WATCH_WRITABLE

/// The sources of one DBusWatch. Confined to the connection queue.
final class WatchBox {
    var sources: [DispatchSourceProtocol] = []
    var running = false

    func setEnabled(_ enabled: Bool) {
        if enabled, !running {
            sources.forEach { $0.resume() }
            running = true
        } else if !enabled, running {
            sources.forEach { $0.suspend() }
            running = false
        }
    }

    func cancel() {
        sources.forEach { $0.cancel() }
        // A suspended source must be resumed before it is released; a cancelled source never
        // calls its handler again.
        if !running { sources.forEach { $0.resume() } }
        running = true
        sources = []
    }
}

/// The timer of one DBusTimeout. Confined to the connection queue.
final class TimeoutBox {
    var timer: DispatchSourceTimer?
    func stop() {
        timer?.cancel()
        timer = nil
    }
}

private let releaseBox: DBusFreeFunction = { data in
    guard let data else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
}

private func core(_ data: UnsafeMutableRawPointer?) -> ConnectionCore {
    Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue()
}

private let cbAddWatch: DBusAddWatchFunction = { watch, data in
    guard let watch else { return 0 }
    core(data).addWatch(watch)
    return 1
}

private let cbRemoveWatch: DBusRemoveWatchFunction = { watch, _ in
    guard let watch, let raw = dbus_watch_get_data(watch) else { return }
    Unmanaged<WatchBox>.fromOpaque(raw).takeUnretainedValue().cancel()
}

private let cbToggleWatch: DBusWatchToggledFunction = { watch, _ in
    guard let watch, let raw = dbus_watch_get_data(watch) else { return }
    Unmanaged<WatchBox>.fromOpaque(raw).takeUnretainedValue().setEnabled(dbus_watch_get_enabled(watch) != 0)
}

private let cbAddTimeout: DBusAddTimeoutFunction = { timeout, data in
    guard let timeout else { return 0 }
    core(data).addTimeout(timeout)
    return 1
}

private let cbRemoveTimeout: DBusRemoveTimeoutFunction = { timeout, _ in
    guard let timeout, let raw = dbus_timeout_get_data(timeout) else { return }
    Unmanaged<TimeoutBox>.fromOpaque(raw).takeUnretainedValue().stop()
}

private let cbToggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
    guard let timeout else { return }
    core(data).armTimeout(timeout)
}

private let dispatchStatusChanged: DBusDispatchStatusFunction = { _, status, data in
    // dbus_connection_dispatch must not be called from inside this callback: schedule it.
    guard status == DBUS_DISPATCH_DATA_REMAINS else { return }
    let c = core(data)
    c.queue.async { c.dispatchAll() }
}

let messageFilter: DBusHandleMessageFunction = { _, message, data in
    guard let message else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return core(data).filter(message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

extension ConnectionCore {
    /// Installs the callbacks (on the queue). The core is passed unretained: `teardown()`
    /// removes every callback before the core can go away.
    func installMainLoop(_ c: OpaquePointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = dbus_connection_add_filter(c, messageFilter, me, nil)
        _ = dbus_connection_set_watch_functions(c, cbAddWatch, cbRemoveWatch, cbToggleWatch, me, nil)
        _ = dbus_connection_set_timeout_functions(c, cbAddTimeout, cbRemoveTimeout, cbToggleTimeout, me, nil)
        dbus_connection_set_dispatch_status_function(c, dispatchStatusChanged, me, nil)
        queue.async { self.dispatchAll() }
    }

    func uninstallMainLoop(_ c: OpaquePointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_remove_filter(c, messageFilter, me)
        _ = dbus_connection_set_watch_functions(c, nil, nil, nil, nil, nil)
        _ = dbus_connection_set_timeout_functions(c, nil, nil, nil, nil, nil)
        dbus_connection_set_dispatch_status_function(c, nil, nil, nil)
    }

    func addWatch(_ watch: OpaquePointer) {
        let box = WatchBox()
        let fd = dbus_watch_get_unix_fd(watch)
        let flags = dbus_watch_get_flags(watch)
        for flag in [watchReadable, watchWritable] where flags & flag != 0 {
            let source: DispatchSourceProtocol = flag == watchReadable
                ? DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
                : DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [unowned self] in
                // The watch stays valid until removeWatch, which cancels this source first.
                _ = dbus_watch_handle(watch, flag)
                self.dispatchAll()
            }
            box.sources.append(source)
        }
        dbus_watch_set_data(watch, Unmanaged.passRetained(box).toOpaque(), releaseBox)
        box.setEnabled(dbus_watch_get_enabled(watch) != 0)
    }

    func addTimeout(_ timeout: OpaquePointer) {
        let box = TimeoutBox()
        dbus_timeout_set_data(timeout, Unmanaged.passRetained(box).toOpaque(), releaseBox)
        armTimeout(timeout)
    }

    func armTimeout(_ timeout: OpaquePointer) {
        guard let raw = dbus_timeout_get_data(timeout) else { return }
        let box = Unmanaged<TimeoutBox>.fromOpaque(raw).takeUnretainedValue()
        box.stop()
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = max(1, Int(dbus_timeout_get_interval(timeout)))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(interval), repeating: .milliseconds(interval))
        timer.setEventHandler { [unowned self] in
            _ = dbus_timeout_handle(timeout)
            self.dispatchAll()
        }
        box.timer = timer
        timer.resume()
    }

    /// Dispatches every queued incoming message (on the queue).
    func dispatchAll() {
        guard let c = conn else { return }
        while dbus_connection_dispatch(c) == DBUS_DISPATCH_DATA_REMAINS {}
    }
}
