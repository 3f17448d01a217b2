// Placeholder until the module lands.
enum LendingStorePlaceholder {}
