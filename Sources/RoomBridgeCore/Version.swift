/// The RoomBridge release, shared by roombridged and roombridgectl (`GetInfo` reports it).
public enum RoomBridgeVersion {
    public static let string = "0.2.0"
}
