/// The IDL of a rental, shared by `io.roombridge.Inventory` and `io.roombridge.Lending`
/// (Varlink interfaces cannot refer to each other's types; the text is one).
enum RentalTypeIDL {
    static let text = """
        # One lend..return period; device and user facts are copies kept after deletion.
        type Rental (
          id: int,
          deviceId: string,
          model: string,
          osVersion: string,
          serialNumber: string,
          userId: string,
          userName: string,
          rentedAt: string,
          dueAt: ?string,
          returnedAt: ?string,
          returnedBy: ?string,
          location: ?string,
          returnLocation: ?string,
          overdue: bool
        )
        """
}
