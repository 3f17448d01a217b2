// Placeholder until the module lands.
enum NDEFPlaceholder {}
