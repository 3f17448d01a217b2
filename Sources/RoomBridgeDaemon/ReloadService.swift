import Logging
import RoomBridgeConfig
import ServiceLifecycle
import UnixSignals

/// Reloads the configuration on SIGHUP, as daemons conventionally do (`systemctl reload`).
///
/// The file is read again with the same command line (flags still win). A file with an error
/// changes nothing: the daemon keeps running with its current settings and says why. Keys that
/// can change safely at run time (`reloadable`, by default `DaemonConfig.isReloadable`: the log
/// level, the lending settings, the reader list, the curtain settings and the outbox targets) are applied; every other
/// changed key is named as taking effect at the next restart. Connections and Watch streams are not
/// touched; readers and the curtain client only when their settings changed. systemd hears
/// `RELOADING=1` when a reload starts and `READY=1` when it is done (sd_notify(3)).
struct ReloadService: Service {
    let signals: UnixSignalsSequence
    let commandLine: DaemonCommandLine
    let current: DaemonConfig
    let logger: Logger
    let reloadable: @Sendable (String) -> Bool
    let notifier: SystemdNotifier
    /// Applies the reloadable settings of a configuration; gets the reloadable keys that changed.
    let apply: @Sendable (DaemonConfig, Set<String>) async -> Void

    init(signals: UnixSignalsSequence, commandLine: DaemonCommandLine, current: DaemonConfig, logger: Logger,
         reloadable: @escaping @Sendable (String) -> Bool = DaemonConfig.isReloadable,
         notifier: SystemdNotifier = SystemdNotifier(environment: [:]),
         apply: @escaping @Sendable (DaemonConfig, Set<String>) async -> Void) {
        self.signals = signals
        self.commandLine = commandLine
        self.current = current
        self.logger = logger
        self.reloadable = reloadable
        self.notifier = notifier
        self.apply = apply
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var current = self.current
            for await _ in signals {
                current = await reload(from: current)
            }
        }
    }

    /// Keys whose values never go into the log: the plain keys of secrets (the curtain's password and PIN).
    static func isSecret(_ key: String) -> Bool {
        SecretKey.all.contains { $0.plainKey?.name == key }
    }

    /// Applies the configuration file's current contents; returns the configuration now in effect.
    func reload(from current: DaemonConfig) async -> DaemonConfig {
        notifier.reloading()
        defer { notifier.ready(status: "configuration reloaded") }
        let new: DaemonConfig
        do {
            new = try commandLine.load()
        } catch {
            logger.error("SIGHUP: configuration not reloaded, the current settings stay in effect: \(error)")
            return current
        }
        let changed = new.changedKeys(since: current)
        let applied = changed.filter(reloadable)
        let restart = changed.filter { !reloadable($0) }
        await apply(new, Set(applied))
        if changed.isEmpty {
            logger.notice("SIGHUP: configuration reloaded; nothing changed")
        } else {
            let describe = { (keys: [String]) in
                keys.map { key in
                    "\(key) = \(Self.isSecret(key) ? "(not shown)" : (try? new.describe(key)) ?? "(unknown key)")"
                }.joined(separator: ", ")
            }
            let later = restart.isEmpty ? "" : "; needs a restart to take effect: \(describe(restart))"
            logger.notice("SIGHUP: configuration reloaded; applied: \(applied.isEmpty ? "nothing" : describe(applied))\(later)")
        }
        // Keys that need a restart keep their running values, so that they are reported again
        // at the next reload until the daemon is restarted.
        var effective = current
        for key in applied {
            do throws(ConfigError) {
                try effective.adopt(key, from: new)
            } catch {
                logger.error("SIGHUP: \(key) keeps its running value: \(error)")
            }
        }
        return effective
    }
}
