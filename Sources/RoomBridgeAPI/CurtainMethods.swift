import RoomBridgeCore
import Varlink

/// `io.roombridge.Curtain`'s methods as the clients call them (see ``InventoryAPI``). Each takes
/// `name`, the curtain's name in the configuration (needed when several are configured; `*`:
/// every curtain, for the commands; a group's name: its curtains), and each command `actor`, as a trusted front end names
/// the person who asked.
public enum CurtainAPI {
    public static let interface = "io.roombridge.Curtain"

    /// The parameters of `GetState`: which curtain.
    public struct ByName: Codable, Sendable, Equatable {
        public var name: String?
        public init(name: String? = nil) { self.name = name }
    }

    /// The parameters of a command without arguments: which curtain, and who asks.
    public struct Target: Codable, Sendable, Equatable {
        public var name: String?
        public var actor: String?
        public init(name: String? = nil, actor: String? = nil) {
            self.name = name
            self.actor = actor
        }
    }

    /// The reply of a command: with a group's name (or `all`, `*`), each curtain's outcome.
    public struct Outcomes: Codable, Sendable, Equatable {
        public var outcomes: [CurtainOutcome]?
        public init(outcomes: [CurtainOutcome]? = nil) { self.outcomes = outcomes }
    }

    public enum GetState: VarlinkMethod {
        public static let name = "io.roombridge.Curtain.GetState"
        public typealias Parameters = ByName
        public struct Reply: Codable, Sendable {
            /// The named curtain, else the first.
            public var curtain: CurtainState
            /// Every configured curtain.
            public var curtains: [CurtainState]
            /// The configuration's groups of curtains.
            public var groups: [CurtainGroup]
            /// Public so that a client can print one field as the daemon sent it (`roombridgectl curtain status --json`).
            public enum CodingKeys: String, CodingKey { case curtain, curtains, groups }
        }
    }

    public enum Open: VarlinkMethod {
        public static let name = "io.roombridge.Curtain.Open"
        public typealias Parameters = Target
        public typealias Reply = Outcomes
    }

    public enum Close: VarlinkMethod {
        public static let name = "io.roombridge.Curtain.Close"
        public typealias Parameters = Target
        public typealias Reply = Outcomes
    }

    public enum Stop: VarlinkMethod {
        public static let name = "io.roombridge.Curtain.Stop"
        public typealias Parameters = Target
        public typealias Reply = Outcomes
    }

    public enum MoveTo: VarlinkMethod {
        public static let name = "io.roombridge.Curtain.MoveTo"
        public struct Parameters: Codable, Sendable {
            /// Percent open, 0 (closed) to 100 (open).
            public var position: Int
            public var name: String?
            public var actor: String?
            public init(position: Int, name: String? = nil, actor: String? = nil) {
                self.position = position
                self.name = name
                self.actor = actor
            }
        }
        public typealias Reply = Outcomes
    }

    /// Sets the controller's schedule (times `HH:MM`, the controller's clock).
    public enum SetSchedule: VarlinkMethod {
        public static let name = "io.roombridge.Curtain.SetSchedule"
        public struct Parameters: Codable, Sendable {
            public var open: String
            public var close: String
            public var openEnabled: Bool
            public var closeEnabled: Bool
            public var name: String?
            public var actor: String?
            public init(open: String, close: String, openEnabled: Bool, closeEnabled: Bool, name: String? = nil, actor: String? = nil) {
                self.open = open
                self.close = close
                self.openEnabled = openEnabled
                self.closeEnabled = closeEnabled
                self.name = name
                self.actor = actor
            }
        }
        public typealias Reply = Outcomes
    }

    /// Asks the controller for its state and schedule again.
    public enum Sync: VarlinkMethod {
        public static let name = "io.roombridge.Curtain.Sync"
        public typealias Parameters = Target
        public typealias Reply = Outcomes
    }

    /// Drops the link and searches for the curtain again.
    public enum Reconnect: VarlinkMethod {
        public static let name = "io.roombridge.Curtain.Reconnect"
        public typealias Parameters = Target
        public typealias Reply = Outcomes
    }
}
