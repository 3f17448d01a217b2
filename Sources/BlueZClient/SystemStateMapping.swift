import CurtainProtocol
import RoomBridgeCore

extension RoomBridgeCore.CurtainState {
    /// Applies an event of the BlueZ client. Motion, position, target, flags and schedule come only from
    /// the device's frames (the device is the source of truth); adapter problems and errors become `lastError`.
    public mutating func apply(_ event: CurtainEvent) {
        switch event {
        case .connection(let state, _):
            switch state {
            case .searching: connection = .searching
            case .connecting: connection = .connecting
            case .connected: connection = .connected
            case .disconnected: connection = .disconnected
            case .standby: connection = .standby
            }
        case .adapter(let adapter):
            switch adapter {
            case .poweredOn, .unknown: break
            case .serviceUnavailable, .noAdapter, .poweredOff: lastError = adapter.description
            }
        case .device(let address, let name):
            self.address = address
            self.name = name
        case .status(let s):
            motion = s.motion
            position = s.position
            target = s.target
            manual = s.manual
            scheduled = s.scheduled
        case .schedule(let s):
            openSchedule = s.open
            closeSchedule = s.close
        case .deviceError(let opcode, let code):
            lastError = "the curtain refused command 0x\(String(opcode, radix: 16)): \(code)"
        case .error(let error):
            lastError = error.description
        case .profile(let id, let keepsSchedule):
            profile = id.rawValue
            scheduleSource = keepsSchedule ? "device" : "daemon"
        case .levels(let b, let l):
            battery = b
            light = l
        case .commandAnswered: break
        }
    }
}

extension CurtainClient {
    /// Feeds every event into the daemon's `SystemState` until the event stream ends.
    public nonisolated func forward(to state: SystemState) async {
        for await event in events {
            if event == .commandAnswered {
                await state.announceCurtainRequests()
                continue
            }
            await state.updateCurtain { $0.apply(event) }
        }
    }
}
