// Placeholder until the module lands.
enum NFCReaderPlaceholder {}
