extension InterfaceIDL {
    public static let tags = """
        # NFC tags: the last tap, and registering device tags (device-tag.md: write the device
        # record, read it back, bind the UID, mark the device NFC registered).
        interface io.roombridge.Tags

        \(TagTypesIDL.text)
        # The most recent tap on any reader (absent before the first).
        method GetLastTap() -> (tap: ?Tap)

        # Arms the reader: the next writable tag (NTAG213/215/216; a factory-blank one is
        # formatted) gets the device record (after a URI record when uri is given), is read back
        # and compared, and its UID is bound to the device. Returns when that is done.
        # lock makes the tag read-only afterwards (irreversible); force re-registers a tag bound
        # to another device. Needs the authorised group.
        method Write(deviceId: string, uri: ?string, lock: ?bool, force: ?bool, timeoutSeconds: ?int)
          -> (uid: string, tagType: string, formatted: bool, locked: bool)

        # Cancels a pending Write (which then fails with reason cancelled).
        method CancelWrite() -> (cancelled: bool)

        error NoSuchDevice (deviceId: string, reason: string, message: string)

        # reason: writeInProgress, noTag, timeout, cancelled, unsupportedTag, wrongTag, readOnly,
        # tooSmall, notFormattable, tagLifted, writeRefused, verifyFailed, readerUnavailable,
        # alreadyBound, messageTooLarge. message says what to do.
        error WriteFailed (deviceId: string, reason: string, message: string)

        error NoReader (message: string)
        """
}
