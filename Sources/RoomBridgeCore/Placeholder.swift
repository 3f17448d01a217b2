// Placeholder until the module lands.
enum RoomBridgeCorePlaceholder {}
