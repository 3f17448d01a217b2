import Logging
import RoomBridgeConfig
import ServiceLifecycle
import UnixSignals

/// Reloads the configuration on SIGHUP, as daemons conventionally do (`systemctl reload`).
///
/// The file is read again with the same command line (flags still win). A file with an error
/// changes nothing: the daemon keeps running with its current settings and says why. Keys that
/// can change safely at run time (`DaemonConfig.isReloadable`: the log level and the lending
/// settings) are applied; every other changed key is named as taking effect at the next restart.
/// Connections, Watch streams and the readers are not touched.
struct ReloadService: Service {
    let signals: UnixSignalsSequence
    let commandLine: DaemonCommandLine
    let current: DaemonConfig
    let logger: Logger
    let apply: @Sendable (DaemonConfig) async -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var current = self.current
            for await _ in signals {
                current = await reload(from: current)
            }
        }
    }

    /// Applies the configuration file's current contents; returns the configuration now in effect.
    func reload(from current: DaemonConfig) async -> DaemonConfig {
        let new: DaemonConfig
        do {
            new = try commandLine.load()
        } catch {
            logger.error("SIGHUP: configuration not reloaded, the current settings stay in effect: \(error)")
            return current
        }
        let changed = new.changedKeys(since: current)
        let applied = changed.filter(DaemonConfig.isReloadable)
        let restart = changed.filter { !DaemonConfig.isReloadable($0) }
        await apply(new)
        if changed.isEmpty {
            logger.notice("SIGHUP: configuration reloaded; nothing changed")
        } else {
            let describe = { (keys: [String]) in keys.map { "\($0) = \(new[$0])" }.joined(separator: ", ") }
            let later = restart.isEmpty ? "" : "; needs a restart to take effect: \(describe(restart))"
            logger.notice("SIGHUP: configuration reloaded; applied: \(applied.isEmpty ? "nothing" : describe(applied))\(later)")
        }
        // Keys that need a restart keep their running values, so that they are reported again
        // at the next reload until the daemon is restarted.
        var effective = current
        for key in applied { effective.replace(key, with: new[key]) }
        return effective
    }
}
