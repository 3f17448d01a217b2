/// One kind of curtain controller, as data: where to write, where replies come from, how positions and
/// schedules work, and its wire format. Adding a kind of curtain means adding a row to ``CurtainProfile/all``.
public struct CurtainProfile: Sendable, Identifiable, CustomStringConvertible {
    /// Stable profile identifiers, as written in the configuration (`profile = "switchbot"`).
    public enum ID: String, Sendable, Hashable, CaseIterable, Codable {
        case roombridge
        case switchbot
        case am43
    }

    /// How commands are written (`GattCharacteristic1.WriteValue` option `type`).
    public enum WriteType: String, Sendable, Hashable {
        /// Write request, answered by the device (ATT errors come back).
        case request
        /// Write without response.
        case command
    }

    /// How a client authenticates, if at all.
    public enum Login: Sendable, Hashable {
        case none
        /// A 16-bit PIN sent after connecting (``CurtainWireRequest/login(pin:)``), with the factory default.
        case pin(default: UInt16)
        /// A password carried in every request (SwitchBot; set in its app).
        case password
    }

    /// How the daemon holds the link to a device of this kind.
    public enum ConnectionPolicy: Sendable, Hashable {
        /// Connected for as long as the daemon runs, reconnected after a loss (a mains-powered controller).
        case persistent
        /// Connected for a command, kept for `hold` after the last one, then released; between commands the state
        /// comes from advertisements (a battery-powered motor that other apps and hubs share).
        case onDemand(hold: Duration)

        /// pySwitchbot's `DISCONNECT_DELAY = 8.5` (`switchbot/devices/device.py`, `_reset_disconnect_timer`): the
        /// link is dropped 8.5 s after the last command.
        public static let switchBotHold: Duration = .milliseconds(8500)

        /// The hold of an on-demand policy; nil when persistent.
        public var hold: Duration? {
            if case .onDemand(let hold) = self { return hold }
            return nil
        }
    }

    public let id: ID
    /// A name for people.
    public let displayName: String
    /// The primary service (also the UUID to filter discovery with).
    public let serviceUUID: String
    /// The characteristic commands are written to.
    public let writeCharacteristicUUID: String
    /// The characteristic replies and status are notified on (may be the write characteristic).
    public let notifyCharacteristicUUID: String
    public let writeType: WriteType
    /// True when the wire position is 0 = open, 100 = closed (our API is 0 = closed, 100 = open).
    public let positionInverted: Bool
    /// True when the device stores and fires a schedule itself; otherwise the daemon keeps it.
    public let keepsSchedule: Bool
    /// True when motion and position updates arrive in advertisements rather than notifications, so a client
    /// must keep discovery running (with a filter on ``serviceUUID``) while connected.
    public let motionFromAdvertisements: Bool
    /// True when the device says itself that a motion was started locally (the `roombridge` MANUAL flag);
    /// otherwise manual operation is inferred as motion the client did not command.
    public let reportsManualFlag: Bool
    public let login: Login
    /// How the daemon holds the link (persistent, or on demand with a hold time).
    public let connection: ConnectionPolicy
    /// The wire format.
    public let codec: any CurtainWireCodec

    public var description: String { id.rawValue }

    /// Every supported profile, by stable ID.
    public static let all: [CurtainProfile] = [roombridge, switchbot, am43]

    /// The profile with this ID.
    public static func named(_ id: ID) -> CurtainProfile {
        all.first { $0.id == id }!
    }

    /// The profile for a configuration value; nil for unknown names.
    public static func named(_ name: String) -> CurtainProfile? {
        ID(rawValue: name.lowercased()).map(named)
    }

    /// Our own controller (docs/curtain-gatt.md).
    public static let roombridge = CurtainProfile(
        id: .roombridge, displayName: "RoomBridge curtain controller",
        serviceUUID: CurtainUUID.service, writeCharacteristicUUID: CurtainUUID.command,
        notifyCharacteristicUUID: CurtainUUID.status, writeType: .request, positionInverted: false,
        keepsSchedule: true, motionFromAdvertisements: false, reportsManualFlag: true, login: .none,
        connection: .persistent, codec: RoomBridgeCodec())

    /// SwitchBot Curtain 1, 2 and 3. On demand, as pySwitchbot (which Home Assistant uses) drives it: it runs on a
    /// battery, the SwitchBot app and hub share its one connection, and it advertises its state.
    public static let switchbot = CurtainProfile(
        id: .switchbot, displayName: "SwitchBot Curtain",
        serviceUUID: SwitchBotCurtainCodec.service, writeCharacteristicUUID: SwitchBotCurtainCodec.tx,
        notifyCharacteristicUUID: SwitchBotCurtainCodec.rx, writeType: .command, positionInverted: true,
        keepsSchedule: false, motionFromAdvertisements: true, reportsManualFlag: false, login: .password,
        connection: .onDemand(hold: ConnectionPolicy.switchBotHold), codec: SwitchBotCurtainCodec())

    /// A-OK AM43 blinds motors. Persistent, as ESPHome's `am43` component holds it (a `ble_client` node that polls
    /// the battery over the held link, `esphome/components/am43/sensor/am43_sensor.cpp` `Am43::update`): the AM43
    /// advertises no state, so a released motor could not be heard at all.
    public static let am43 = CurtainProfile(
        id: .am43, displayName: "A-OK AM43 blinds motor",
        serviceUUID: AM43Codec.service, writeCharacteristicUUID: AM43Codec.characteristic,
        notifyCharacteristicUUID: AM43Codec.characteristic, writeType: .command, positionInverted: true,
        keepsSchedule: false, motionFromAdvertisements: false, reportsManualFlag: false,
        login: .pin(default: AM43Codec.defaultPIN), connection: .persistent, codec: AM43Codec())

    /// This profile with a device's own settings: its password (SwitchBot) or speed.
    public func with(password: String?) -> CurtainProfile {
        guard var codec = codec as? SwitchBotCurtainCodec else { return self }
        codec.password = password.flatMap { $0.isEmpty ? nil : $0 }
        return replacingCodec(codec)
    }

    /// This profile with another hold time, when it connects on demand (`curtain.hold`).
    public func with(hold: Duration) -> CurtainProfile {
        guard connection.hold != nil else { return self }
        return replacing(codec: codec, connection: .onDemand(hold: hold))
    }

    func replacingCodec(_ codec: any CurtainWireCodec) -> CurtainProfile {
        replacing(codec: codec, connection: connection)
    }

    func replacing(codec: any CurtainWireCodec, connection: ConnectionPolicy) -> CurtainProfile {
        CurtainProfile(id: id, displayName: displayName, serviceUUID: serviceUUID,
                       writeCharacteristicUUID: writeCharacteristicUUID,
                       notifyCharacteristicUUID: notifyCharacteristicUUID, writeType: writeType,
                       positionInverted: positionInverted, keepsSchedule: keepsSchedule,
                       motionFromAdvertisements: motionFromAdvertisements, reportsManualFlag: reportsManualFlag,
                       login: login, connection: connection, codec: codec)
    }

    /// True when write and notify use one characteristic.
    public var sharesCharacteristic: Bool {
        CurtainUUID.matches(writeCharacteristicUUID, notifyCharacteristicUUID)
    }
}

/// The `roombridge` controller's wire format (docs/curtain-gatt.md), over ``CurtainCommand`` and ``CurtainFrame``.
public struct RoomBridgeCodec: CurtainWireCodec, Hashable {
    public init() {}

    public func frames(for request: CurtainWireRequest) throws(CurtainCommandError) -> [[UInt8]] {
        switch request {
        case .command(let command): [try command.encode()]
        case .login: []
        case .query: [try CurtainCommand.sync.encode()]
        }
    }

    public func decode(notification: [UInt8], replyingTo request: CurtainWireRequest?) throws(CurtainDecodeError)
        -> [CurtainDeviceEvent] {
        switch try CurtainFrame.decode(notification) {
        case .status(let s): [.status(s)]
        case .schedule(let s): [.schedule(s)]
        case .error(let op, let code): [.refused(.roomBridge(opcode: op, code: code))]
        }
    }

    public func decode(advertisement: CurtainAdvertisementData) -> [CurtainDeviceEvent] {
        guard let data = advertisement.serviceData[CurtainUUID.service],
              let ad = CurtainAdvertisement(serviceData: data) else { return [] }
        return [.position(ad.position), .motion(ad.motion), .battery(ad.battery)]
    }
}
