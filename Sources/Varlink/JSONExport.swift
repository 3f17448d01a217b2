// Varlink messages are JSON: the one JSON implementation (module `JSON`, shared with NDEF) is
// part of this module's API, so that users of Varlink see `JSONValue` without importing it.
@_exported import JSON
