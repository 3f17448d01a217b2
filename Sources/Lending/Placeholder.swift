// Placeholder until the module lands.
enum LendingPlaceholder {}
