// Placeholder until the module lands.
enum RoomBridgeDaemonPlaceholder {}
