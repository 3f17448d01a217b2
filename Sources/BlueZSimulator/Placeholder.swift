// Placeholder until the module lands.
enum BlueZSimulatorPlaceholder {}
