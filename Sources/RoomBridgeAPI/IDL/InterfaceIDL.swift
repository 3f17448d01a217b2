/// roombridged's Varlink interface descriptions, as `GetInterfaceDescription` answers them: the text of the wire
/// contract, in one place for the daemon (whose interfaces serve them and check every call against them), the
/// clients and the tests (ContractTests compares them with the Swift types of ``RoomBridgeAPI``). Varlink
/// interfaces cannot refer to each other's types, so a type two interfaces share is one text included in both
/// (`RentalTypeIDL`, `LendingArmTypeIDL`, `TagTypesIDL`, `CurtainTypesIDL`, `PresenceTypesIDL`).
public enum InterfaceIDL {
    /// Every interface's description.
    public static var all: [String] { [state, tags, lending, inventory, curtain, presence, outbox] }
}
