/// The IDL types of a tap, shared by `io.roombridge.State` and `io.roombridge.Tags` (Varlink
/// interfaces cannot refer to each other's types, so each declares them; the text is one).
enum TagTypesIDL {
    static let text = """
        # One NDEF record of a tag.
        type TagRecord (
          tnf: string,
          type: string,
          id: ?string,
          text: ?string,
          uri: ?string,
          payloadHex: string
        )

        # The device facts written on a device tag.
        type DeviceTag (deviceId: string, model: ?string, serial: ?string)

        # A tag or card arriving in a reader's field: one per physical tap.
        type Tap (
          reader: string,
          uid: string,
          tagType: string,
          atqa: ?string,
          sak: ?string,
          records: []TagRecord,
          device: ?DeviceTag,
          readError: ?string,
          readMillis: float,
          at: string
        )
        """
}
